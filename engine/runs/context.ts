import { ApplicationFailure } from '@temporalio/activity';
import type { RunStepRow } from '../../db/repositories/run-steps';
import type { StepRef } from '../contract';
import type { Engine as ActivityDeps } from '../compose';
import type { Executors } from './executor/select';

/** What each part of the run activities is built from: the worker's engine and the run executors. */
export interface RunContext {
  deps: ActivityDeps;
  executors: Executors;
}

export type EndStatus = 'succeeded' | 'failed';

/** An executor's own error (a bad agent configuration, a bug) fails the run; retrying would change nothing. */
export function fromExecutor<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw ApplicationFailure.nonRetryable(`the executor could not ${what}: ${(err as Error).message}`, 'ExecutorError');
  }
}

export const toRef = (s: RunStepRow): StepRef => ({ runId: s.run_id, index: s.step_index, type: s.type });
