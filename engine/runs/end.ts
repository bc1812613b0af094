import type { RunStepRow } from '../../db/repositories/run-steps';
import { createRunsRepository, type RunRow } from '../../db/repositories/runs';
import { createThreadMessagesRepository } from '../../db/repositories/thread-messages';
import type { RunOutcome } from '../contract';
import type { ModelRunOutput } from './executor/model-executor';
import { capError, capValue, MAX_RUN_OUTPUT_BYTES } from './executor/output-cap';
import { userMessage } from './executor/system-message';
import { fromExecutor, type EndStatus, type RunContext } from './context';
import type { WakeUps } from './wake-ups';
import type { Unit } from '../unit';
import { emitRunEnd } from './end-event';

/**
 * How a run ends: its status and output recorded once, its thread extended, agent.completed /
 * agent.failed written and fanned out in the same transaction, then its account's line woken.
 */
export function createRunEnd({ deps, executors }: RunContext, wakeUps: WakeUps) {
  const { db, transaction } = deps;
  const runs = createRunsRepository(db);
  const threadMessages = createThreadMessagesRepository(db);
  const { afterEnd } = wakeUps;

  /**
   * queued/running → succeeded/failed and agent.completed / agent.failed, in the caller's unit of work;
   * null when already ended. A model run that succeeded in a thread adds its exchange to the thread: the
   * user's message (as of the run's creation) and the model's answer.
   */
  async function end(unit: Unit, runId: string, status: EndStatus, output: unknown, error: string | null): Promise<RunRow | null> {
    const { tx } = unit;
    const row = await runs.recordRunEnd(runId, { status, output, error: error === null ? null : capError(error) }, tx);
    if (!row) return null;
    if (status === 'succeeded' && row.thread_id && row.executor === 'model') {
      const user = userMessage(row.input);
      await threadMessages.insertThreadMessages(
        {
          accountId: row.account_id,
          agentId: row.agent_id,
          threadId: row.thread_id,
          runId: row.id,
          messages: [
            ...(user !== null ? [{ role: 'user' as const, content: user, createdAt: row.created_at }] : []),
            { role: 'assistant' as const, content: (row.output as ModelRunOutput).text },
          ],
        },
        tx,
      );
    }
    await emitRunEnd(unit, row);
    return row;
  }

  /**
   * Ends the run from its steps (the executor composes the output; the engine keeps it within 256 KiB):
   * succeeded or failed by the executor's rule, or failed with `timed out` when the run's time ran out.
   */
  function finishFrom(run: Pick<RunRow, 'id' | 'executor' | 'input'>, steps: RunStepRow[], timedOut: boolean): Promise<RunOutcome> {
    const executor = executors.get(run.executor ?? 'tools');
    const result = fromExecutor('compose the output', () => executor.compose({ input: run.input, steps, timedOut }));
    const output = capValue(result.output, MAX_RUN_OUTPUT_BYTES);
    return settle(run.id, result.error === null ? 'succeeded' : 'failed', output, result.error);
  }

  /** Ends the run in its own transaction (once) and wakes the next in line; answers the run's status. */
  async function settle(runId: string, status: EndStatus, output: unknown, error: string | null): Promise<RunOutcome> {
    const ended = await transaction((_tx, unit) => end(unit, runId, status, output, error));
    if (!ended) {
      const current = await runs.findRun(runId);
      return { status: current ? current.status : 'gone' };
    }
    afterEnd(ended.account_id);
    return { status };
  }

  return { end, settle, finishFrom };
}
export type RunEnd = ReturnType<typeof createRunEnd>;
