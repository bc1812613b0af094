import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities';
import { TASK_QUEUE, workflowIds } from '../../engine/temporal/names';
import { WORKFLOW_TYPES, RUN_SLOT_FREED_SIGNAL, type BeginRunOutcome, type BegunRun, type RunOutcome, type StepOutcome, type StepRef } from '../../engine/contract';
import { onCleanup, suiteContext } from '../helpers/cleanup';
import { quietRuntime, workflowBundle } from '../helpers/engine';
import { testNamespace } from '../helpers/namespace';

type RunActivities = Pick<Activities, 'beginRunStep' | 'runToolStep' | 'runModelStep' | 'finishRun' | 'failRun'>;

/**
 * runAgentWorkflow with mocked activities (samples-typescript `workflows-mocks`): the orchestration
 * alone — waiting for a slot, the time limit, and the last word (failRun) when an activity fails for
 * good or the workflow is cancelled — on the test run's dev server.
 */
describe('runAgentWorkflow (mocked activities)', () => {
  const suite = suiteContext();
  let env: TestWorkflowEnvironment;

  before(async () => {
    quietRuntime();
    env = await TestWorkflowEnvironment.createFromExistingServer({ address: process.env.TEMPORAL_ADDRESS, namespace: testNamespace(__filename) });
    onCleanup(suite, () => env.teardown());
  });

  /**
   * Starts the workflow on a worker with `activities`; `during` runs while it does; answers its result.
   * The input is as engine/outbox/starts.ts writes it, with the run's time limit (`timeoutMs`).
   */
  async function run(activities: Partial<RunActivities>, during?: (runId: string) => Promise<void>, timeoutMs = 60_000): Promise<{ runId: string; result: RunOutcome }> {
    const runId = randomUUID();
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: testNamespace(__filename),
      taskQueue: TASK_QUEUE,
      workflowBundle: await workflowBundle(),
      activities,
    });
    const result = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(WORKFLOW_TYPES.run, { workflowId: workflowIds.run(runId), taskQueue: TASK_QUEUE, args: [{ runId, timeoutMs }] });
      await during?.(runId);
      return (await handle.result()) as RunOutcome;
    });
    return { runId, result };
  }

  /** A step activity that notes each step it makes in `made` and answers it done (`ended`: the run's end with it). */
  const stepsInto =
    (made: number[], ended?: 'succeeded' | 'failed') =>
    async (ref: StepRef): Promise<StepOutcome> => {
      made.push(ref.index);
      return { status: 'done', ok: true, ...(ended ? { ended } : {}) };
    };
  /** finishRun noting each input in `finishes`; the run succeeded. */
  const finishInto = (finishes: unknown[]) => async (input: unknown) => {
    finishes.push(input);
    return { status: 'succeeded' as const };
  };

  const running = (runId: string, timeoutMs: number, count = 1): BeginRunOutcome => ({
    status: 'running',
    timeoutMs,
    steps: Array.from({ length: count }, (_, index): StepRef => ({ runId, index, type: 'tool' })),
  });

  /** The schedule-to-close timeouts (ms) of the activity tasks of `type` in a run's history. */
  async function scheduleToClose(runId: string, type: string): Promise<number[]> {
    const history = await env.client.workflow.getHandle(workflowIds.run(runId)).fetchHistory();
    return (history.events ?? []).flatMap((e) => {
      const a = e.activityTaskScheduledEventAttributes;
      if (a?.activityType?.name !== type) return [];
      return [Number(a.scheduleToCloseTimeout?.seconds ?? 0) * 1000 + (a.scheduleToCloseTimeout?.nanos ?? 0) / 1e6];
    });
  }

  /**
   * An activity's call that never returns, heartbeating like the real step's: when the attempt is ended,
   * `ended` is told whether the server ended it (the step timed out: its heartbeat answered "not found";
   * or a cancellation asked for), then the cancellation is thrown.
   */
  async function hangUntilEnded(ended: (byTheServer: boolean) => void): Promise<never> {
    const ctx = Context.current();
    const timer = setInterval(() => ctx.heartbeat(), 200);
    try {
      await ctx.cancelled;
    } catch (err) {
      const details = ctx.cancellationDetails;
      ended(details?.cancelRequested === true || details?.notFound === true);
      throw err;
    } finally {
      clearInterval(timer);
    }
    throw new Error('unreachable: ctx.cancelled only rejects');
  }

  const toolSteps = (runId: string, from: number, to: number): StepRef[] => Array.from({ length: to - from }, (_, i) => ({ runId, index: from + i, type: 'tool' }));

  describe('a run begun by its first step (beginRunStep; the input has the run\'s timeoutMs)', () => {
    it('begins the run and makes its first step in one activity task, then the planned steps and those the first added, in that order', async () => {
      const made: number[] = [];
      const finishes: unknown[] = [];
      const { runId, result } = await run(
        {
          beginRunStep: async ({ runId }) =>
            ({ begun: { status: 'running', timeoutMs: 60_000, steps: toolSteps(runId, 1, 3) }, first: { status: 'done', ok: true, next: [{ runId, index: 3, type: 'model' }] } }) satisfies BegunRun,
          runToolStep: stepsInto(made),
          runModelStep: stepsInto(made),
          finishRun: finishInto(finishes),
        },
        undefined,
        60_000,
      );
      assert.deepEqual(result, { status: 'succeeded' });
      assert.deepEqual(made, [1, 2, 3], 'the planned steps after the first, then what the first added');
      assert.deepEqual(finishes, [{ runId, timeoutMs: 60_000, timedOut: false }]);
      const events = (await env.client.workflow.getHandle(workflowIds.run(runId)).fetchHistory()).events ?? [];
      assert.deepEqual(
        events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
        ['beginRunStep', 'runToolStep', 'runToolStep', 'runModelStep'],
        'no beginRun: the first step\'s activity began the run',
      );
      // The first workflow task schedules beginRunStep, with nothing before it but the patch marker: no local activity.
      const scheduled = events.findIndex((e) => e.activityTaskScheduledEventAttributes);
      assert.equal(events.slice(0, scheduled).filter((e) => e.workflowTaskCompletedEventAttributes).length, 1, 'scheduled by the first workflow task');
      assert.equal(events.slice(0, scheduled).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length, 0);
      assert.equal(events.filter((e) => e.markerRecordedEventAttributes).length, 2, 'the patch and finishRun (a local activity): no beginRun marker');
      assert.deepEqual(await scheduleToClose(runId, 'beginRunStep'), [60_000], 'the run\'s time limit is the first step\'s schedule-to-close');
      const retry = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'beginRunStep')?.activityTaskScheduledEventAttributes?.retryPolicy;
      assert.equal(retry?.maximumAttempts, 10, 'beginRunStep is retried as beginRun was (10 attempts, up to 30 s apart), not as a step');
      for (const ms of [...(await scheduleToClose(runId, 'runToolStep')), ...(await scheduleToClose(runId, 'runModelStep'))]) {
        assert.ok(ms > 50_000 && ms <= 60_000, `a later step's schedule-to-close is the time left from when beginRunStep was scheduled (${ms} ms)`);
      }
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, await env.client.workflow.getHandle(workflowIds.run(runId)).fetchHistory());
    });

    it('a first step that ended the run ends the workflow: one activity task and one marker in all; its history replays', async () => {
      let finishes = 0;
      const { runId, result } = await run(
        {
          beginRunStep: async () => ({ begun: { status: 'running', timeoutMs: 60_000, steps: [] }, first: { status: 'done', ok: true, ended: 'succeeded' } }),
          runToolStep: async () => {
            throw new Error('no step after the first');
          },
          finishRun: async () => {
            finishes++;
            return { status: 'succeeded' };
          },
        },
        undefined,
        60_000,
      );
      assert.deepEqual(result, { status: 'succeeded' });
      assert.equal(finishes, 0);
      const history = await env.client.workflow.getHandle(workflowIds.run(runId)).fetchHistory();
      assert.equal((history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).length, 1);
      assert.equal((history.events ?? []).filter((e) => e.markerRecordedEventAttributes).length, 1, 'the patch alone');
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history);
    });

    it('a run with no step (no tools) begins in beginRunStep and is finished by finishRun', async () => {
      const finishes: unknown[] = [];
      const { runId, result } = await run(
        {
          beginRunStep: async () => ({ begun: { status: 'running', timeoutMs: 60_000, steps: [] } }),
          finishRun: finishInto(finishes),
        },
        undefined,
        60_000,
      );
      assert.deepEqual(result, { status: 'succeeded' });
      assert.deepEqual(finishes, [{ runId, timeoutMs: 60_000, timedOut: false }]);
    });

    it('a queued run waits for the slot signal (not its slow recheck), then asks beginRunStep again and runs', async () => {
      let asks = 0;
      const made: number[] = [];
      const { result } = await run(
        {
          beginRunStep: async ({ runId }) =>
            ++asks === 1 ? { begun: { status: 'queued', recheckMs: 10 * 60_000 } } : { begun: { status: 'running', timeoutMs: 60_000, steps: toolSteps(runId, 1, 2) }, first: { status: 'done', ok: true } },
          runToolStep: stepsInto(made, 'succeeded'),
        },
        async (runId) => {
          await waitUntil(() => asks === 1, 'the first ask');
          await new Promise((r) => setTimeout(r, 500));
          assert.equal(asks, 1, 'no polling while it waits');
          await env.client.workflow.getHandle(workflowIds.run(runId)).signal(RUN_SLOT_FREED_SIGNAL);
        },
        60_000,
      );
      assert.deepEqual(result, { status: 'succeeded' });
      assert.equal(asks, 2);
      assert.deepEqual(made, [1]);
    });

    it('the time running out inside beginRunStep (its first step in flight) times the run out, as a step\'s does', async () => {
      let cancelled: { byTheServer: boolean } | undefined;
      let finishedWith: { timedOut?: boolean } | undefined;
      const { runId, result } = await run(
        {
          // The first step's call never returns.
          beginRunStep: () => hangUntilEnded((byTheServer) => (cancelled = { byTheServer })),
          runToolStep: async () => {
            throw new Error('no later step is made');
          },
          finishRun: async (input) => {
            finishedWith = input;
            await waitUntil(() => cancelled !== undefined, 'beginRunStep to see its cancellation');
            return { status: 'failed' };
          },
        },
        undefined,
        1_500,
      );
      assert.deepEqual(result, { status: 'failed' });
      assert.equal(finishedWith?.timedOut, true);
      assert.deepEqual(cancelled, { byTheServer: true });
      const events = (await env.client.workflow.getHandle(workflowIds.run(runId)).fetchHistory()).events ?? [];
      const timedOut = events.flatMap((e) => (e.activityTaskTimedOutEventAttributes ? [e.activityTaskTimedOutEventAttributes] : []));
      assert.deepEqual(timedOut.map((t) => t.failure?.timeoutFailureInfo?.timeoutType), [temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE]);
      assert.deepEqual(events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []), ['beginRunStep', 'finishRun'], 'finished timed out by an activity task');
    });

    it('beginRunStep failing for good fails the run (failRun) with its message', async () => {
      const failures: { error: string }[] = [];
      const { result } = await run(
        {
          beginRunStep: async () => {
            throw ApplicationFailure.nonRetryable('the database refused the plan');
          },
          failRun: async (input) => {
            failures.push(input);
            return { status: 'failed' };
          },
        },
        undefined,
        60_000,
      );
      assert.deepEqual(result, { status: 'failed' });
      assert.equal(failures.length, 1);
      assert.match(failures[0]!.error, /^the run could not be executed: the database refused the plan/);
    });

    it('a run whose time was already up when it was found running (a later execution) times out without making a step', async () => {
      let finishedWith: { timedOut?: boolean } | undefined;
      const { result } = await run(
        {
          beginRunStep: async ({ runId }) => ({ begun: { status: 'running', timeoutMs: 0, steps: toolSteps(runId, 0, 2) } }),
          runToolStep: async () => {
            throw new Error('no step is made');
          },
          finishRun: async (input) => {
            finishedWith = input;
            return { status: 'failed' };
          },
        },
        undefined,
        60_000,
      );
      assert.deepEqual(result, { status: 'failed' });
      assert.equal(finishedWith?.timedOut, true);
    });
  });

  it('makes each step in order, then finishes the run', async () => {
    const made: number[] = [];
    const finishes: unknown[] = [];
    const { runId, result } = await run({
      beginRunStep: async ({ runId }) => ({ begun: running(runId, 60_000, 3) }),
      runToolStep: stepsInto(made),
      finishRun: finishInto(finishes),
    });
    assert.deepEqual(result, { status: 'succeeded' });
    assert.deepEqual(made, [0, 1, 2]);
    assert.equal(finishes.length, 1);
    assert.equal((finishes[0] as { timedOut: boolean }).timedOut, false);
    // The run's time limit is the steps' own schedule-to-close timeout: no timer started (and cancelled) per run.
    const history = await env.client.workflow.getHandle(workflowIds.run(runId)).fetchHistory();
    assert.deepEqual((history.events ?? []).filter((e) => e.timerStartedEventAttributes).length, 0, 'no timer in the history');
    const limits = (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes?.activityType?.name === 'runToolStep' ? [e.activityTaskScheduledEventAttributes] : []));
    assert.equal(limits.length, 3);
    for (const a of limits) {
      const ms = Number(a.scheduleToCloseTimeout?.seconds ?? 0) * 1000 + (a.scheduleToCloseTimeout?.nanos ?? 0) / 1e6;
      assert.ok(ms > 50_000 && ms <= 60_000, `a step's schedule-to-close is the run's time left (${ms} ms)`);
    }
  });

  it('makes the steps a model step adds after it, each by the activity of its type, until one adds none', async () => {
    const made: string[] = [];
    const { result } = await run({
      beginRunStep: async ({ runId }) => ({ begun: { status: 'running', timeoutMs: 60_000, steps: [{ runId, index: 0, type: 'model' }] } }),
      runModelStep: async (ref) => {
        made.push(`model ${ref.index}`);
        if (ref.index > 0) return { status: 'done', ok: true };
        const next: StepRef[] = [{ ...ref, index: 1, type: 'tool' }, { ...ref, index: 2, type: 'tool' }, { ...ref, index: 3, type: 'model' }];
        return { status: 'done', ok: true, next };
      },
      runToolStep: async (ref) => {
        made.push(`tool ${ref.index}`);
        return { status: 'done', ok: true };
      },
      finishRun: async () => ({ status: 'succeeded' }),
    });
    assert.deepEqual(result, { status: 'succeeded' });
    assert.deepEqual(made, ['model 0', 'tool 1', 'tool 2', 'model 3']);
  });

  it('a last step that ended the run ends the workflow with its status, without finishRun; its history replays', async () => {
    const made: number[] = [];
    let finishes = 0;
    const { runId, result } = await run({
      beginRunStep: async ({ runId }) => ({ begun: running(runId, 60_000, 2) }),
      runToolStep: async (ref) => {
        made.push(ref.index);
        // An `ended` while steps remain is not the run's end: the workflow goes on.
        return { status: 'done', ok: true, ended: ref.index === 0 ? 'succeeded' : 'failed' } satisfies StepOutcome;
      },
      finishRun: async () => {
        finishes++;
        return { status: 'succeeded' };
      },
    });
    assert.deepEqual(made, [0, 1]);
    assert.deepEqual(result, { status: 'failed' });
    assert.equal(finishes, 0);
    const history = await env.client.workflow.getHandle(workflowIds.run(runId)).fetchHistory();
    const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes).length;
    assert.equal(markers, 1, 'the patch alone: no finishRun');
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history);
  });

  it('when the time is up, the server times out the step in flight (its call learns it by its heartbeat) and the run finishes as timed out', async () => {
    let cancelled: { byTheWorkflow: boolean } | undefined;
    let finishedWith: { timedOut?: boolean } | undefined;
    const started = Date.now();
    const { runId, result } = await run({
      beginRunStep: async ({ runId }) => ({ begun: running(runId, 1_500, 2) }),
      runToolStep: async (ref) => {
        if (ref.index === 1) throw new Error('the second step is never reached');
        // A call that never returns: the server times the attempt out at the run's deadline and answers its next heartbeat "not found".
        return hangUntilEnded((byTheServer) => (cancelled = { byTheWorkflow: byTheServer }));
      },
      finishRun: async (input) => {
        finishedWith = input;
        // Kept open until the step has seen its end, so the end is the server's answer (not the worker shutting down).
        await waitUntil(() => cancelled !== undefined, 'the step activity to see its cancellation');
        return { status: 'failed' };
      },
    });
    assert.deepEqual(result, { status: 'failed' });
    assert.equal(finishedWith?.timedOut, true);
    assert.deepEqual(cancelled, { byTheWorkflow: true }, 'the server ended the step in flight (not the worker shutting down)');
    assert.ok(Date.now() - started < 15_000);
    const events = (await env.client.workflow.getHandle(workflowIds.run(runId)).fetchHistory()).events ?? [];
    assert.equal(events.filter((e) => e.timerStartedEventAttributes).length, 0, 'no timer');
    const timedOut = events.flatMap((e) => (e.activityTaskTimedOutEventAttributes ? [e.activityTaskTimedOutEventAttributes] : []));
    assert.equal(timedOut.length, 1, 'the step timed out');
    assert.equal(timedOut[0]!.failure?.timeoutFailureInfo?.timeoutType, temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE);
  });

  it('a step still failing when the run runs out of time before its next retry times the run out', async () => {
    const attempts: number[] = [];
    let finishedWith: { timedOut?: boolean } | undefined;
    let failed = false;
    const { result } = await run({
      beginRunStep: async ({ runId }) => ({ begun: running(runId, 2_500, 1) }),
      runToolStep: async () => {
        attempts.push(Date.now());
        throw ApplicationFailure.retryable('the database is down');
      },
      finishRun: async (input) => {
        finishedWith = input;
        return { status: 'failed' };
      },
      failRun: async () => {
        failed = true;
        return { status: 'failed' };
      },
    });
    assert.deepEqual(result, { status: 'failed' });
    assert.equal(finishedWith?.timedOut, true, 'timed out, not failed by the error');
    assert.equal(failed, false);
    // Retries 1 s, then 2 s apart: the third attempt would start past the run's 2.5 s.
    assert.equal(attempts.length, 2);
  });

  it('an activity that failed for good fails the run (failRun) with its message', async () => {
    const failures: { error: string }[] = [];
    let finished = false;
    const { result } = await run({
      beginRunStep: async ({ runId }) => ({ begun: running(runId, 60_000, 2) }),
      runToolStep: async () => {
        throw ApplicationFailure.nonRetryable('the database refused the step');
      },
      finishRun: async () => {
        finished = true;
        return { status: 'succeeded' };
      },
      failRun: async (input) => {
        failures.push(input);
        return { status: 'failed' };
      },
    });
    assert.deepEqual(result, { status: 'failed' });
    assert.equal(finished, false);
    assert.equal(failures.length, 1);
    assert.match(failures[0]!.error, /^the run could not be executed: the database refused the step/);
  });

  it('cancelling the workflow fails the run (failRun) rather than leave it queued, then ends as cancelled', async () => {
    let asks = 0;
    let runId: string | undefined;
    // What ended the run, in order: the activity and what it was given.
    const ended: [string, unknown][] = [];
    const ending = (activity: string, status: 'succeeded' | 'failed') => async (input: unknown) => {
      ended.push([activity, input]);
      return { status };
    };
    const cancelled = run(
      {
        beginRunStep: async () => {
          asks++;
          return { begun: { status: 'queued', recheckMs: 10 * 60_000 } };
        },
        finishRun: ending('finishRun', 'succeeded'),
        failRun: ending('failRun', 'failed'),
      },
      async (id) => {
        runId = id;
        await waitUntil(() => asks === 1, 'the run to wait for a slot');
        await env.client.workflow.getHandle(workflowIds.run(id)).cancel();
      },
    );
    await assert.rejects(cancelled, (err) => err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure);
    assert.deepEqual(ended, [['failRun', { runId, timeoutMs: 60_000, error: 'the run was cancelled' }]]);
  });

  it('a run that is not to be executed (gone, already ended) ends the workflow without finishing anything', async () => {
    let finished = false;
    const { result } = await run({
      beginRunStep: async () => ({ begun: { status: 'gone' } }),
      finishRun: async () => {
        finished = true;
        return { status: 'succeeded' };
      },
    });
    assert.deepEqual(result, { status: 'gone' });
    assert.equal(finished, false);
  });
});

async function waitUntil(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
