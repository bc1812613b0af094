import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * SQL statements counted in a bench's server processes (bench/kit/sql-counter.cjs, preloaded by the flags
 * below): what each sent over a window, by text. Every statement is one round trip to Postgres.
 */

let dir: string | undefined;
/** The folder the counters write to (one per bench process, removed when it exits). */
function countsDir(): string {
  if (!dir) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sql-'));
    const made = dir;
    process.once('exit', () => fs.rmSync(made, { recursive: true, force: true }));
  }
  return dir;
}

/** Node flags and environment that preload the counter into a server process. */
export function sqlCounter(): { flags: string[]; env: Record<string, string> } {
  return { flags: ['--require', path.join(__dirname, 'sql-counter.cjs')], env: { BENCH_SQL_COUNTS_DIR: countsDir() } };
}

const seen = new Map<number, number>();

/** The statements `pid` (started with sqlCounter) has sent so far, by text; empty when it is gone or does not answer within 5 s. */
export async function sqlCounts(pid: number): Promise<Map<string, number>> {
  const file = path.join(countsDir(), `${pid}.json`);
  const before = seen.get(pid) ?? 0;
  try {
    process.kill(pid, 'SIGUSR2');
  } catch {
    return new Map();
  }
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; await sleep(10)) {
    try {
      const { seq, counts } = JSON.parse(fs.readFileSync(file, 'utf8')) as { seq: number; counts: Record<string, number> };
      if (seq > before) {
        seen.set(pid, seq);
        return new Map(Object.entries(counts));
      }
    } catch {
      // not written yet
    }
  }
  return new Map();
}

export interface SqlWindow {
  /** Statements sent by the processes over the window. */
  total: number;
  /** By text (whitespace folded), most frequent first. */
  byText: [string, number][];
}

/**
 * Starts a window over the statements of the processes `pids()` lists (read at both ends; one new since the
 * start counts from 0). Its end answers what they sent meanwhile.
 */
export async function sqlMeter(pids: () => number[]): Promise<() => Promise<SqlWindow>> {
  const start = new Map(await Promise.all(pids().map(async (pid) => [pid, await sqlCounts(pid)] as const)));
  return async () => {
    const byText = new Map<string, number>();
    for (const pid of pids()) {
      const before = start.get(pid) ?? new Map<string, number>();
      for (const [text, n] of await sqlCounts(pid)) {
        const key = text.replace(/\s+/g, ' ').trim();
        byText.set(key, (byText.get(key) ?? 0) + n - (before.get(text) ?? 0));
      }
    }
    const sorted = [...byText].filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
    return { total: sorted.reduce((sum, [, n]) => sum + n, 0), byText: sorted };
  };
}
