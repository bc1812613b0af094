/**
 * `npm run bench:soak`: does the stack `npm start` brings up keep up with many `* * * * *` triggers for
 * as long as it runs, and where does its `.data/` settle? Run it against a running `npm start` (the API
 * at SOAK_API, its Postgres at DATABASE_URL, its Temporal data in SOAK_DATA_DIR): it registers accounts
 * (at most 500 triggers each, the default QUOTA_TRIGGERS, so each stays under FIRES_PER_MINUTE 600),
 * creates SOAK_TRIGGERS user cron triggers `* * * * *` through the public API, then, for SOAK_MINUTES
 * whole minutes, prints after each minute: the fires of that minute recorded (the transaction that counts
 * them), how many of them before the next minute began, their lag from the scheduled time (p50 / p99),
 * the size of the dev server's SQLite file with its write-ahead log, and the load average. It ends
 * with a summary and, 90 s later, the fires recorded in all (late ones included); the triggers are left for the operator to delete (or start afresh with a new `.data/`).
 *
 * Settings: SOAK_API (http://127.0.0.1:3000), SOAK_TRIGGERS (1000), SOAK_MINUTES (90), SOAK_DATA_DIR
 * (.data), DATABASE_URL (postgres://postgres@127.0.0.1:5432/test: the database `npm start` was given).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { ApiClient } from './kit/api-client';
import { setting } from './kit/settings';
import { percentile } from './kit/stats';

const API = process.env.SOAK_API || 'http://127.0.0.1:3000';
const TRIGGERS = setting('SOAK_TRIGGERS', 1000);
const MINUTES = setting('SOAK_MINUTES', 90);
const DATA_DIR = process.env.SOAK_DATA_DIR || '.data';
const DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const PER_ACCOUNT = 500;
const MINUTE = 60_000;

/** The dev server's SQLite file and its write-ahead log, in MiB. */
function temporalDbMiB(): number {
  const file = path.join(DATA_DIR, 'temporal.db');
  const bytes = [file, `${file}-wal`].reduce((sum, f) => sum + (fs.existsSync(f) ? fs.statSync(f).size : 0), 0);
  return bytes / 2 ** 20;
}

async function createTriggers(): Promise<string[]> {
  const accounts: string[] = [];
  const started = Date.now();
  for (let made = 0, a = 0; made < TRIGGERS; a++) {
    const email = `soak-${process.pid}-${a}@example.com`;
    const api = new ApiClient(API);
    await api.register(email, 'soak-password');
    const account = await api.request<{ id: string }>('GET', '/api/account');
    accounts.push(account.id);
    const count = Math.min(PER_ACCOUNT, TRIGGERS - made);
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let i = next++; i < count; i = next++) {
          await api.request('POST', '/api/user-triggers', {
            type: 'cron',
            name: `soak ${a}-${i}`,
            configJson: { cronExpression: '* * * * *', timezone: 'UTC' },
          });
        }
      }),
    );
    made += count;
  }
  console.log(`soak: ${TRIGGERS} cron triggers "* * * * *" created through ${API} in ${((Date.now() - started) / 1000).toFixed(1)} s, in ${accounts.length} account(s)`);
  return accounts;
}

async function main() {
  const db = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  const accounts = await createTriggers();
  // Every minute that begins once all schedules exist: each trigger's schedule is synced through the outbox.
  const syncStart = Date.now();
  while ((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE kind = 'schedule'`)).rows[0]!.n > 0) await sleep(1_000);
  console.log(`soak: every schedule synced ${((Date.now() - syncStart) / 1000).toFixed(1)} s after the last trigger was created`);
  const first = Math.ceil((Date.now() + 1_000) / MINUTE) * MINUTE;
  console.log(`soak: observing ${MINUTES} minute(s) from ${new Date(first).toISOString()}; temporal.db ${temporalDbMiB().toFixed(0)} MiB`);
  console.log('  minute (UTC)        recorded  before next minute   lag p50    lag p99   temporal.db+wal  load');
  const summary = { expected: 0, recorded: 0, inTime: 0, lags: [] as number[], worstP99: 0, sizes: [] as number[] };
  for (let m = 0; m < MINUTES; m++) {
    const start = first + m * MINUTE;
    const end = start + MINUTE;
    await sleep(Math.max(0, end + 5_000 - Date.now()));
    const { rows } = await db.query<{ lag: number; late: boolean }>(
      `SELECT extract(epoch FROM (f.created_at - f.scheduled_at)) * 1000 AS lag, f.created_at >= $3 AS late
       FROM fires f WHERE f.account_id = ANY($1) AND f.status = 'fired' AND f.scheduled_at >= $2 AND f.scheduled_at < $3`,
      [accounts, new Date(start), new Date(end)],
    );
    const lags = rows.map((r) => Number(r.lag));
    const inTime = rows.filter((r) => !r.late).length;
    const p99 = percentile(lags, 99);
    const size = temporalDbMiB();
    summary.expected += TRIGGERS;
    summary.recorded += rows.length;
    summary.inTime += inTime;
    summary.lags.push(...lags);
    summary.worstP99 = Math.max(summary.worstP99, p99);
    summary.sizes.push(size);
    console.log(
      `  ${new Date(start).toISOString().slice(11, 16)} (+${String(m + 1).padStart(3)} min)  ${String(rows.length).padStart(5)}/${TRIGGERS}  ${String(inTime).padStart(9)}  ${(percentile(lags, 50) / 1000).toFixed(1).padStart(12)} s ${(p99 / 1000).toFixed(1).padStart(8)} s ${size.toFixed(0).padStart(12)} MiB  ${os.loadavg()[0]!.toFixed(1).padStart(5)}`,
    );
  }
  console.log(
    `soak: ${summary.recorded} of ${summary.expected} fires recorded, ${summary.inTime} before the next minute began; lag p50 ${(percentile(summary.lags, 50) / 1000).toFixed(1)} s, p99 ${(percentile(summary.lags, 99) / 1000).toFixed(1)} s, worst minute's p99 ${(summary.worstP99 / 1000).toFixed(1)} s; temporal.db+wal ${summary.sizes[0]?.toFixed(0)} MiB after the first minute, ${Math.max(...summary.sizes).toFixed(0)} MiB at most, ${summary.sizes.at(-1)?.toFixed(0)} MiB at the end`,
  );
  // Late fires of the last minutes are recorded too, and nothing else: the fires recorded in the end.
  await sleep(90_000);
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM fires f WHERE f.account_id = ANY($1) AND f.status = 'fired' AND f.scheduled_at >= $2 AND f.scheduled_at < $3`,
    [accounts, new Date(first), new Date(first + MINUTES * MINUTE)],
  );
  console.log(`soak: 90 s later, ${rows[0]!.n} of ${summary.expected} fires recorded in all (the rest were skipped by Temporal: a schedule's fire still running at its next time, overlap policy skip)`);
  await db.end();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
