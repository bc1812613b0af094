import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { RetentionOutcome } from '../../activities/retention';
import { RETENTION_STEPS, type RetentionStep } from '../../lib/retention';
import { TASK_QUEUE, workflowIds } from '../../engine/temporal/names';
import { WORKFLOW_TYPES } from '../../engine/contract';
import type { RetentionInput, RetentionResult } from '../../workflows/retention';
import { suiteContext } from '../helpers/cleanup';
import { quietRuntime, workflowBundle } from '../helpers/engine';
import { startTimeSkippingServer } from '../helpers/time-skipping';

/**
 * retentionWorkflow with its activity replaced (samples-typescript's mocked-activities tests), on the
 * time-skipping server so that the retry intervals pass at once: the order of steps, the calls while a
 * step has more, and what a failing step does.
 */
describe('retention workflow (mocked activity, time-skipping server)', () => {
  const suite = suiteContext();
  let env: TestWorkflowEnvironment;

  before(async () => {
    quietRuntime();
    env = await startTimeSkippingServer(suite);
  });

  /** Runs the workflow against `answer`; returns its result (or failure) and every call made, in order. */
  async function run(answer: (step: RetentionStep, call: number) => RetentionOutcome, input: RetentionInput = {}) {
    const calls: RetentionStep[] = [];
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: TASK_QUEUE,
      workflowBundle: await workflowBundle(),
      activities: {
        async deleteExpiredRows({ step }: { step: RetentionStep; budgetMs: number }): Promise<RetentionOutcome> {
          calls.push(step);
          return answer(step, calls.filter((s) => s === step).length);
        },
      },
    });
    const outcome: { result?: RetentionResult; error?: unknown } = await worker.runUntil(
      env.client.workflow
        .execute(WORKFLOW_TYPES.retention, { taskQueue: TASK_QUEUE, workflowId: `${workflowIds.retention}-${randomUUID()}`, args: [input] })
        .then((result: RetentionResult) => ({ result }), (error: unknown) => ({ error })),
    );
    return { ...outcome, calls };
  }

  it('runs every step in order, calling a step again while it has more', async () => {
    const { result, calls } = await run((step, call) => (step === 'runs' && call < 3 ? { deleted: 100, done: false } : { deleted: 1, done: true }));
    assert.deepEqual(calls, ['deliveries', 'fires', 'runs', 'runs', 'runs', 'events', 'hook_receipts', 'idempotency_keys', 'rate_limits', 'refresh_tokens',
      'missed_fires', 'schedule_corrections', 'recoveries', 'thread_messages', 'schedule_history', 'usage_days']);
    assert.deepEqual(result, { ...Object.fromEntries(RETENTION_STEPS.map((s) => [s, 1])), runs: 201 });
  });

  it('calls a step at most maxCallsPerStep times per run', async () => {
    const { result, calls } = await run((step) => (step === 'events' ? { deleted: 10, done: false } : { deleted: 0, done: true }), { maxCallsPerStep: 4 });
    assert.equal(calls.filter((s) => s === 'events').length, 4);
    assert.equal(result?.events, 40);
  });

  it('a failing step is retried 3 times, the others still run, then the workflow fails naming it', async () => {
    const { error, calls } = await run((step) => {
      if (step === 'fires') throw new Error('relation "fires" is locked');
      return { deleted: 1, done: true };
    });
    assert.equal(calls.filter((s) => s === 'fires').length, 3, 'bounded retries');
    assert.deepEqual([...new Set(calls)], [...RETENTION_STEPS], 'every step ran');
    assert.ok(error instanceof WorkflowFailedError, String(error));
    const cause = error.cause;
    assert.ok(cause instanceof ApplicationFailure);
    assert.match(cause.message, /retention failed for fires \(relation "fires" is locked\)/);
    assert.deepEqual(cause.details?.[0], { ...Object.fromEntries(RETENTION_STEPS.map((s) => [s, 1])), fires: 0 });
  });
});
