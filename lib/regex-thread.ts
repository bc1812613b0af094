import { Worker } from 'node:worker_threads';

/**
 * The thread that matches long `$regex` values (lib/event-filter.ts), so that the event loop of the
 * process never waits for one: RE2 matches linearly but a hostile pattern can defeat its DFA, and a 1 MiB
 * value then costs seconds (npm run bench:regex). One thread per process, started when the worker's
 * activities are composed (or with its first job), holding its own RE2 (the `re2` package) and LRU of compiled patterns; the process only posts the
 * pattern and the value and awaits the answer.
 *
 * Fair between accounts: each account has its own queue and the thread takes them in turn, one job at
 * a time, so another account's job waits behind at most one job of each account ahead of it, never behind
 * a hostile account's backlog. And each account may keep the thread busy at most THREAD_MS_PER_MINUTE of
 * every minute (per process): a job whose turn comes after its account's share of the current minute is
 * spent is not run but refused (FilterBudgetSpent), and its event's fan-out records the filter as not
 * evaluated (a `skipped` fire, reason `filter_budget`).
 */

/** Of every minute, how long one account's jobs may keep the matching thread busy (per process). */
export const THREAD_MS_PER_MINUTE = 30_000;

/** A job refused because its account's share of the matching thread is spent for this minute. */
export class FilterBudgetSpent extends Error {
  constructor() {
    super('the account used its share of the matching thread for this minute');
  }
}

/** The thread's code: RE2 with an LRU of compiled patterns; answers whether the pattern matched, and how long it took. */
const THREAD_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const RE2 = require(workerData.re2Path);
const cache = new Map();
function compiled(pattern) {
  let regex = cache.get(pattern);
  if (regex) cache.delete(pattern);
  else {
    regex = new RE2(pattern, 'u');
    if (cache.size >= workerData.cacheSize) cache.delete(cache.keys().next().value);
  }
  cache.set(pattern, regex);
  return regex;
}
parentPort.on('message', (job) => {
  const start = performance.now();
  let matched = false;
  let error = null;
  try {
    matched = compiled(job.pattern).test(job.value);
  } catch (err) {
    error = String((err && err.message) || err);
  }
  parentPort.postMessage({ id: job.id, matched, error, ms: performance.now() - start });
});
`;

interface Job {
  id: number;
  accountId: string;
  pattern: string;
  value: string;
  resolve: (matched: boolean) => void;
  reject: (err: Error) => void;
}

interface Answer {
  id: number;
  matched: boolean;
  error: string | null;
  ms: number;
}

export interface RegexThread {
  /** Whether `pattern` (accepted by compileRegex) matches somewhere in `value`, matched in full on the thread, in the account's turn. */
  match(accountId: string, pattern: string, value: string): Promise<boolean>;
  /**
   * Starts the thread now rather than with the first job: starting one (a V8 isolate, RE2 loaded) took
   * 3–270 ms of this thread's time on the build machine, which a process pays once, at start-up.
   */
  start(): void;
  /** Stops the thread (jobs waiting are refused); a later job starts a new one. */
  close(): Promise<void>;
}

export function createRegexThread(options: { msPerMinute?: number; cacheSize?: number } = {}): RegexThread {
  const msPerMinute = options.msPerMinute ?? THREAD_MS_PER_MINUTE;
  const cacheSize = options.cacheSize ?? 500;
  /** Waiting jobs per account; accounts in the order they are served (round-robin). */
  const queues = new Map<string, Job[]>();
  let worker: Worker | null = null;
  let running: Job | null = null;
  let nextId = 1;
  /** Per account: the start of its current minute and the thread's milliseconds spent on it since. */
  const spent = new Map<string, { since: number; ms: number }>();

  function spawn(): Worker {
    const w = new Worker(THREAD_CODE, { eval: true, workerData: { re2Path: require.resolve('re2'), cacheSize } });
    w.on('message', (answer: Answer) => {
      const job = running;
      if (!job || job.id !== answer.id) return;
      running = null;
      charge(job.accountId, answer.ms);
      if (answer.error !== null) job.reject(new Error(`the pattern could not be matched: ${answer.error}`));
      else job.resolve(answer.matched);
      next();
    });
    w.on('error', (err) => stopped(err));
    w.on('exit', (code) => stopped(new Error(`the matching thread exited (code ${code})`)));
    return w;
  }

  /** The thread died: the job in flight fails, and the next job starts a new thread. */
  function stopped(err: Error): void {
    if (!worker) return;
    worker = null;
    const job = running;
    running = null;
    job?.reject(err);
    next();
  }

  function charge(accountId: string, ms: number): void {
    const now = Date.now();
    const entry = spent.get(accountId);
    if (!entry || now - entry.since >= 60_000) spent.set(accountId, { since: now, ms });
    else entry.ms += ms;
  }

  function overShare(accountId: string): boolean {
    const entry = spent.get(accountId);
    return !!entry && Date.now() - entry.since < 60_000 && entry.ms >= msPerMinute;
  }

  /** The account whose job ran last: it goes after the accounts waiting, even when its queue began afresh while that job ran. */
  let lastAccount: string | null = null;

  /** The next job, taking the accounts in turn: the first account's first job, then that account goes last. */
  function take(): Job | null {
    const last = lastAccount !== null ? queues.get(lastAccount) : undefined;
    if (last && queues.size > 1) {
      queues.delete(lastAccount!);
      queues.set(lastAccount!, last);
    }
    for (const [accountId, queue] of queues) {
      lastAccount = accountId;
      queues.delete(accountId);
      const job = queue.shift()!;
      if (queue.length > 0) queues.set(accountId, queue);
      return job;
    }
    return null;
  }

  function next(): void {
    while (!running) {
      const job = take();
      if (!job) {
        worker?.unref();
        return;
      }
      if (overShare(job.accountId)) {
        job.reject(new FilterBudgetSpent());
        continue;
      }
      worker ??= spawn();
      worker.ref();
      running = job;
      worker.postMessage({ id: job.id, pattern: job.pattern, value: job.value });
    }
  }

  return {
    match(accountId, pattern, value) {
      return new Promise<boolean>((resolve, reject) => {
        const job: Job = { id: nextId++, accountId, pattern, value, resolve, reject };
        const queue = queues.get(accountId);
        if (queue) queue.push(job);
        else queues.set(accountId, [job]);
        next();
      });
    },

    start() {
      if (worker) return;
      worker = spawn();
      worker.unref();
    },

    async close() {
      const w = worker;
      worker = null;
      for (const queue of queues.values()) for (const job of queue) job.reject(new Error('the matching thread was closed'));
      queues.clear();
      running?.reject(new Error('the matching thread was closed'));
      running = null;
      if (w) await w.terminate();
    },
  };
}

let shared: RegexThread | null = null;

/** The process's matching thread (started with its first job). */
export function regexThread(): RegexThread {
  shared ??= createRegexThread();
  return shared;
}
