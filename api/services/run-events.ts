import type { Db } from '../../db/pool';
import type { NotificationListener } from '../../db/notifications';
import { listFinishedStepsAfter } from '../../db/repositories/run-steps';
import { findAccountRun, findRun, type RunRow } from '../../db/repositories/runs';
import { NotFoundError } from '../errors';
import { toRun, toRunStep } from '../mappers';
import type { Caller } from './auth-service';

/**
 * Live run events: `GET /api/runs/:id/events` as Server-Sent Events. Each finished step is
 * an event `step` with the step's index as its id, in index order (steps are made one after another),
 * then one event `done` with the run, and the stream ends. A client that reconnects with `Last-Event-ID`
 * gets the steps after that index. An idle stream gets a comment line every RUN_EVENTS_HEARTBEAT_MS.
 *
 * No stream holds a database connection: the process listens on one connection for `run_events`
 * notifications (db/notifications.ts; the database notifies a run's id when one of its steps finishes
 * or it ends), and a stream reads — borrowing a pooled connection for two short queries — only when its
 * run was notified, when the listener reconnected, and at each heartbeat (a safety net: a notification
 * lost with a dropped connection costs at most one heartbeat's delay).
 */

/** Steps read per query; a run with more finished steps is read in several. */
const STEPS_PER_READ = 100;

export interface EventSink {
  write(chunk: string): void;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** One stream's wait for its run to move: woken by a notification, or after `ms`. */
class Watcher {
  private dirty = false;
  private wake: (() => void) | null = null;

  notify(): void {
    this.dirty = true;
    this.wake?.();
  }

  /** 'moved' when notified since the last wait, 'idle' after `ms`, 'closed' when `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<'moved' | 'idle' | 'closed'> {
    if (signal.aborted) return Promise.resolve('closed');
    if (this.dirty) {
      this.dirty = false;
      return Promise.resolve('moved');
    }
    return new Promise((resolve) => {
      const done = (outcome: 'moved' | 'idle' | 'closed') => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.wake = null;
        this.dirty = false;
        resolve(outcome);
      };
      const onAbort = () => done('closed');
      const timer = setTimeout(() => done('idle'), ms);
      signal.addEventListener('abort', onAbort, { once: true });
      this.wake = () => done('moved');
    });
  }
}

const sse = (event: string, data: unknown, id?: number) => `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

export function createRunEventService(deps: { db: Db; listener: NotificationListener; heartbeatMs: number }) {
  const { db, listener, heartbeatMs } = deps;
  const watchers = new Map<string, Set<Watcher>>();
  const streams = new Set<AbortController>();
  let unsubscribe: (() => void) | null = null;

  function watch(runId: string): { watcher: Watcher; stop: () => void } {
    unsubscribe ??= listener.subscribe({
      notified: (id) => watchers.get(id)?.forEach((w) => w.notify()),
      reconnected: () => watchers.forEach((set) => set.forEach((w) => w.notify())),
    });
    const watcher = new Watcher();
    const set = watchers.get(runId) ?? new Set<Watcher>();
    set.add(watcher);
    watchers.set(runId, set);
    return {
      watcher,
      stop: () => {
        set.delete(watcher);
        if (set.size === 0) watchers.delete(runId);
      },
    };
  }

  /** Sends the finished steps after `after`; answers the last index sent. */
  async function sendSteps(runId: string, after: number, sink: EventSink): Promise<number> {
    for (;;) {
      const steps = await listFinishedStepsAfter(db, runId, after, STEPS_PER_READ);
      for (const step of steps) {
        sink.write(sse('step', toRunStep(step), step.step_index));
        after = step.step_index;
      }
      if (steps.length < STEPS_PER_READ || sink.signal.aborted) return after;
    }
  }

  return {
    /** The caller's run, checked before the stream starts (so a 404 is an ordinary JSON answer). */
    async find(caller: Caller, runId: string): Promise<RunRow> {
      const run = await findAccountRun(db, caller.accountId, runId);
      if (!run) throw new NotFoundError('Run');
      return run;
    },

    /** Streams the run's events from after `afterIndex` until `done` (or until the client goes, or the app closes). */
    async stream(run: RunRow, afterIndex: number, sink: EventSink): Promise<void> {
      const own = new AbortController();
      streams.add(own);
      const signal = AbortSignal.any([sink.signal, own.signal]);
      const { watcher, stop } = watch(run.id);
      const out: EventSink = { write: sink.write, signal };
      try {
        sink.write(': run events\nretry: 2000\n\n');
        let after = afterIndex;
        while (!signal.aborted) {
          after = await sendSteps(run.id, after, out);
          const now = await findRun(db, run.id);
          if (!now) return; // deleted with its agent: nothing more will come
          if (now.status === 'succeeded' || now.status === 'failed') {
            // Steps that finished between the two reads come before `done`.
            await sendSteps(run.id, after, out);
            sink.write(sse('done', toRun(now)));
            return;
          }
          const outcome = await watcher.wait(heartbeatMs, signal);
          if (outcome === 'idle') sink.write(': heartbeat\n\n');
        }
      } finally {
        stop();
        streams.delete(own);
      }
    },

    /** Ends every open stream (the app is closing). */
    closeAll(): void {
      for (const s of streams) s.abort();
    },
  };
}
export type RunEventService = ReturnType<typeof createRunEventService>;
