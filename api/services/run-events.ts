import { randomUUID } from 'node:crypto';
import { withTransaction, type Db } from '../../db/pool';
import type { NotificationListener } from '../../db/notifications';
import type { RunStreamLeasesRepository } from '../../db/repositories/run-stream-leases';
import type { ApprovalsRepository } from '../../db/repositories/approvals';
import { parseRunDelta, type RunDelta } from '../../db/repositories/run-deltas';
import type { RunStepsRepository } from '../../db/repositories/run-steps';
import type { RunsRepository } from '../../db/repositories/runs';
import { NotFoundError, ServiceUnavailableError, TooManyRequestsError } from '../errors';
import { toRun, toRunStep } from '../mappers';
import { toApproval } from './approval-service';
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
 * lost with a dropped connection costs at most one heartbeat's delay). A read asks for the steps after the
 * last one the stream sent and for the run's status alone; the whole run only for `done`.
 *
 * Deltas: a model step's text as it arrives comes on the same channel, as notifications whose payload is
 * a delta (db/repositories/run-deltas.ts; engine/runs/deltas.ts sends them), and is written to the run's
 * streams as events `delta` `{ stepIndex, offset, text }` with no database read. A stream sends them only
 * after the stored steps it began with, only for steps after the last one it sent (a delta that comes
 * after its step was read is dropped: the step holds it), and per step only in order: a delta that does
 * not continue what the stream sent of its step (one lost with a dropped connection, or a retried call
 * starting again) ends that step's deltas. So a client sees of each step at most one unbroken piece of
 * its text, then the step whole.
 *
 * Waiting: while the run waits for a person's decision (status `waiting`), each of its pending approvals is
 * sent once as an event `waiting` with the approval (docs/api.md § Approvals), also to a stream opened while
 * the run already waits; the stream goes on when the run resumes (the database notifies the run's id when
 * it begins to wait, migration 25, and when the approval step finishes).
 *
 * Streams are bounded (docs/api.md § Live run streams):
 * - RUN_STREAMS_PER_USER open at once per user, counted across every API process by a place (a row of
 *   run_stream_leases) each stream holds: the process renews its streams' places every RUN_STREAMS_CHECK_MS
 *   and gives one back when its stream ends; a dead process's places stop counting when they expire
 *   (LEASE_CHECKS intervals). RUN_STREAMS_PER_PROCESS at once in this process, whoever opens them.
 * - Backpressure: a write that leaves the client's unsent data over the socket's high-water mark waits (up
 *   to a heartbeat interval) for the client to take it; once the unsent data passes MAX_UNSENT_BYTES the
 *   client is not reading, and it is disconnected rather than buffered for. So a stream holds at most 1 MiB
 *   unsent plus the steps of one read.
 * - Access: every RUN_STREAMS_CHECK_MS each stream's caller is authenticated again, as a request would be
 *   (a removed member, an expired access token, a deleted API key): one that may no longer read ends.
 */

/** Steps read per query; a run with more finished steps is read in several (a read is held in memory until sent). */
const STEPS_PER_READ = 4;
/** A client with more than this unsent is not reading: it is disconnected. */
const MAX_UNSENT_BYTES = 1024 * 1024;
/** A place expires this many check intervals after its last renewal (a process that died stops counting then). */
const LEASE_CHECKS = 3;
/** Expired places deleted per check (left by processes that died). */
const EXPIRED_PER_CHECK = 100;
/** Callers checked again at once: a process's checks take a few pooled connections, never the whole pool. */
const CHECKS_AT_ONCE = 4;
/** Deltas kept while a stream sends the stored steps it begins with (more are dropped: its client joined mid-step). */
const EARLY_DELTAS = 64;

export interface EventSink {
  /** Writes `chunk`; false when the client's unsent data is now over the socket's high-water mark. */
  write(chunk: string): boolean;
  /** Bytes written that the client has not taken yet (the response's buffer and its socket's). */
  unsent(): number;
  /** Resolves once the client has taken what was written, after `ms`, or when `signal` aborts. */
  drained(ms: number, signal: AbortSignal): Promise<void>;
  /** Drops the connection at once, unsent data and all. */
  disconnect(): void;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** One stream's wait for its run to move: woken by a notification, or after `ms`. */
class Watcher {
  private dirty = false;
  private wake: (() => void) | null = null;

  constructor(readonly delta: (d: RunDelta) => void) {}

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

/** A stream of this process: its place, its caller's renewed check, and how to end it. */
interface OpenStream {
  id: string;
  userId: string;
  accountId: string;
  stillAllowed: () => Promise<boolean>;
  end: AbortController;
}

/** A stream that holds its place: `stream` sends the run's events; `close` gives the place back (idempotent). */
export interface LiveRunStream {
  stream(afterIndex: number, sink: EventSink): Promise<void>;
  close(): void;
}

export function createRunEventService(deps: {
  db: Db;
  approvals: ApprovalsRepository;
  runs: RunsRepository;
  runSteps: RunStepsRepository;
  listener: NotificationListener;
  leases: RunStreamLeasesRepository;
  heartbeatMs: number;
  perUser: number;
  perAccount: number;
  perProcess: number;
  checkMs: number;
  log: (msg: string, err: unknown) => void;
}) {
  const { db, approvals, runs, runSteps, listener, leases, heartbeatMs } = deps;
  const ttlMs = LEASE_CHECKS * deps.checkMs;
  const retryAfterSeconds = Math.max(1, Math.ceil(deps.checkMs / 1000));
  const watchers = new Map<string, Set<Watcher>>();
  const open = new Map<string, OpenStream>();
  /** Streams being opened (counted against RUN_STREAMS_PER_PROCESS before their first await). */
  let opening = 0;
  /** Streams of each account in this process, open or being opened (RUN_STREAMS_PER_ACCOUNT's count here; its places count every process's). */
  const byAccount = new Map<string, number>();
  const leaveAccount = (accountId: string) => {
    const left = (byAccount.get(accountId) ?? 1) - 1;
    if (left === 0) byAccount.delete(accountId);
    else byAccount.set(accountId, left);
  };
  let unsubscribe: (() => void) | null = null;
  let checker: NodeJS.Timeout | null = null;
  let checking = false;

  function watch(runId: string, onDelta: (d: RunDelta) => void): { watcher: Watcher; stop: () => void } {
    unsubscribe ??= listener.subscribe({
      notified: (payload) => {
        const delta = parseRunDelta(payload);
        if (delta) watchers.get(delta.runId)?.forEach((w) => w.delta(delta));
        else watchers.get(payload)?.forEach((w) => w.notify());
      },
      reconnected: () => watchers.forEach((set) => set.forEach((w) => w.notify())),
    });
    const watcher = new Watcher(onDelta);
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

  /**
   * Every RUN_STREAMS_CHECK_MS while streams are open: renews their places (one statement), deletes a few
   * expired ones, and asks for each stream whether its caller may still read; a stream whose caller may not
   * (or whose check fails: deny by default) ends.
   */
  async function check(): Promise<void> {
    if (checking) return;
    checking = true;
    try {
      const streams = [...open.values()];
      try {
        await leases.renew(streams.map((s) => ({ id: s.id, userId: s.userId, accountId: s.accountId })), ttlMs);
        await leases.deleteExpired(EXPIRED_PER_CHECK);
      } catch (err) {
        deps.log('live run streams: could not renew their places', err);
      }
      const checkOne = async (s: OpenStream) => {
        const allowed = await s.stillAllowed().catch((err: unknown) => {
          deps.log('live run streams: could not check a caller\'s access again; the stream ends', err);
          return false;
        });
        if (!allowed) s.end.abort();
      };
      for (let i = 0; i < streams.length; i += CHECKS_AT_ONCE) await Promise.all(streams.slice(i, i + CHECKS_AT_ONCE).map(checkOne));
    } finally {
      checking = false;
    }
  }

  function register(s: OpenStream): void {
    open.set(s.id, s);
    checker ??= setInterval(() => void check(), deps.checkMs).unref();
  }

  function unregister(s: OpenStream): void {
    if (!open.delete(s.id)) return;
    leaveAccount(s.accountId);
    if (open.size === 0 && checker) {
      clearInterval(checker);
      checker = null;
    }
    leases.release(s.id).catch((err: unknown) => deps.log('live run streams: could not give a place back (it expires by itself)', err));
  }

  /**
   * Sends the finished steps after `after`, one read of STEPS_PER_READ at a time; answers the last index
   * sent, and whether the stream may go on.
   */
  async function sendSteps(
    runId: string,
    after: number,
    send: (chunk: string) => Promise<boolean>,
    sending: (index: number) => void,
  ): Promise<{ after: number; ok: boolean }> {
    for (;;) {
      const steps = await runSteps.listFinishedStepsAfter(runId, after, STEPS_PER_READ);
      for (const step of steps) {
        sending(step.step_index);
        if (!(await send(sse('step', toRunStep(step), step.step_index)))) return { after, ok: false };
        after = step.step_index;
      }
      if (steps.length < STEPS_PER_READ) return { after, ok: true };
    }
  }

  async function stream(s: OpenStream, runId: string, afterIndex: number, sink: EventSink): Promise<void> {
    const signal = AbortSignal.any([sink.signal, s.end.signal]);
    /** Writes `chunk` unless the client is gone or not reading (then it is disconnected); false: stop. */
    const send = async (chunk: string): Promise<boolean> => {
      if (signal.aborted) return false;
      if (sink.unsent() > MAX_UNSENT_BYTES) {
        sink.disconnect();
        return false;
      }
      if (!sink.write(chunk)) await sink.drained(heartbeatMs, signal);
      return !signal.aborted;
    };
    /** The last step sent (or being sent): its deltas and those of every step before it are no longer sent. */
    let stepSent = afterIndex;
    const sending = (index: number) => void (stepSent = Math.max(stepSent, index));
    /** Deltas that came before the stored steps the stream begins with were sent (a few; then dropped). */
    let early: RunDelta[] | null = [];
    /** Where the next delta of the step being streamed must start. */
    let expected: { stepIndex: number; offset: number } | null = null;
    const sendDelta = (d: RunDelta) => {
      if (signal.aborted || d.stepIndex <= stepSent) return;
      if (expected && d.stepIndex < expected.stepIndex) return;
      if (expected?.stepIndex === d.stepIndex && d.offset !== expected.offset) return;
      if (sink.unsent() > MAX_UNSENT_BYTES) return sink.disconnect();
      // Not awaited: a client slower than the text fills its unsent data and is disconnected (above).
      sink.write(sse('delta', { stepIndex: d.stepIndex, offset: d.offset, text: d.text }));
      expected = { stepIndex: d.stepIndex, offset: d.offset + d.text.length };
    };
    const onDelta = (d: RunDelta) => {
      if (!early) return sendDelta(d);
      if (early.length < EARLY_DELTAS) early.push(d);
    };
    const { watcher, stop } = watch(runId, onDelta);
    try {
      if (!(await send(': run events\nretry: 2000\n\n'))) return;
      let after = afterIndex;
      /** Approvals sent as `waiting` (each once). */
      const announced = new Set<string>();
      while (!signal.aborted) {
        const sent = await sendSteps(runId, after, send, sending);
        if (early) {
          const waiting = early;
          early = null;
          waiting.forEach(sendDelta);
        }
        if (!sent.ok) return;
        after = sent.after;
        const status = await runs.findRunStatus(runId);
        if (!status) return; // deleted with its agent: nothing more will come
        if (status === 'succeeded' || status === 'failed') {
          // Steps that finished between the two reads come before `done`.
          if (!(await sendSteps(runId, after, send, sending)).ok) return;
          const ended = await runs.findRun(runId);
          if (ended) await send(sse('done', toRun(ended)));
          return;
        }
        if (status === 'waiting') {
          for (const approval of await approvals.listPendingRunApprovals(runId)) {
            if (announced.has(approval.id)) continue;
            announced.add(approval.id);
            if (!(await send(sse('waiting', toApproval(approval))))) return;
          }
        }
        const outcome = await watcher.wait(heartbeatMs, signal);
        if (outcome === 'idle' && !(await send(': heartbeat\n\n'))) return;
      }
    } finally {
      stop();
    }
  }

  return {
    /**
     * A place for a stream of the caller's run, taken before the stream starts (so a refusal is an ordinary
     * JSON answer): 404 for a run the caller cannot see, 503 when this process holds RUN_STREAMS_PER_PROCESS
     * streams, 429 when the caller's account holds RUN_STREAMS_PER_ACCOUNT of them (so one account cannot
     * take the processes' share) or the caller RUN_STREAMS_PER_USER (both in every API process together: places
     * in Postgres; this process's own count of the account refuses first, without a statement).
     * `stillAllowed` asks again whether the caller may read it (checked every RUN_STREAMS_CHECK_MS).
     */
    async open(caller: Caller, runId: string, stillAllowed: () => Promise<boolean>): Promise<LiveRunStream> {
      const accountFull = () =>
        new TooManyRequestsError(
          `at most ${deps.perAccount} live run streams per account (RUN_STREAMS_PER_ACCOUNT) are open at once: close one, or try again in ${retryAfterSeconds} s`,
          retryAfterSeconds,
        );
      if (open.size + opening >= deps.perProcess) {
        throw new ServiceUnavailableError(
          `This API process has ${deps.perProcess} live run streams open (RUN_STREAMS_PER_PROCESS); try again in ${retryAfterSeconds} s`,
          retryAfterSeconds,
        );
      }
      const accountStreams = byAccount.get(caller.accountId) ?? 0;
      // This process's own count refuses at once, without a statement; the places in Postgres count every process's.
      if (accountStreams >= deps.perAccount) throw accountFull();
      opening++;
      byAccount.set(caller.accountId, accountStreams + 1);
      let registered = false;
      try {
        if (!(await runs.accountHasRun(caller.accountId, runId))) throw new NotFoundError('Run');
        const id = randomUUID();
        const placed = await withTransaction(db, async (tx) => {
          await leases.lockUserAndAccount(caller.userId, caller.accountId, tx);
          return leases.takeIfUnder({ id, userId: caller.userId, accountId: caller.accountId }, { perUser: deps.perUser, perAccount: deps.perAccount }, ttlMs, tx);
        });
        if (placed === 'user') {
          throw new TooManyRequestsError(
            `at most ${deps.perUser} live run streams per user (RUN_STREAMS_PER_USER) are open at once: close one, or try again in ${retryAfterSeconds} s`,
            retryAfterSeconds,
          );
        }
        if (placed === 'account') throw accountFull();
        const s: OpenStream = { id, userId: caller.userId, accountId: caller.accountId, stillAllowed, end: new AbortController() };
        register(s);
        registered = true;
        return {
          /** Streams the run's events from after `afterIndex` until `done`, the client goes, it stops reading, the caller loses access or the app closes. */
          stream: async (afterIndex, sink) => {
            try {
              await stream(s, runId, afterIndex, sink);
            } finally {
              unregister(s);
            }
          },
          close: () => unregister(s),
        };
      } finally {
        opening--;
        // A stream that opened gives its account's place back when it ends (unregister).
        if (!registered) leaveAccount(caller.accountId);
      }
    },

    /** Ends every open stream (the app is closing). */
    closeAll(): void {
      for (const s of open.values()) s.end.abort();
    },
  };
}
export type RunEventService = ReturnType<typeof createRunEventService>;
