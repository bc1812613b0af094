/**
 * Preloaded into a bench's server processes (`node --require ./bench/kit/sql-counter.cjs …`; bench/kit/sql-counts.ts
 * gives the flags): counts every statement the process sends through node-postgres (each one round trip:
 * BEGIN, COMMIT and SAVEPOINT included), by text. On SIGUSR2 it writes the counts so far to
 * `$BENCH_SQL_COUNTS_DIR/<pid>.json` (`{ seq, counts }`, written whole and renamed into place), which the bench
 * reads before and after a phase. Only for processes started with it: SIGUSR2 ends any other. Plain
 * CommonJS so that it loads before tsx and in the worker threads that inherit the flag (where it does nothing).
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { isMainThread } = require('node:worker_threads');

const dir = process.env.BENCH_SQL_COUNTS_DIR;
if (isMainThread && dir) {
  const pg = require(require.resolve('pg', { paths: [process.cwd()] }));
  const counts = new Map();
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (...args) {
    const first = args[0];
    const text = typeof first === 'string' ? first : ((first && first.text) || '?');
    counts.set(text, (counts.get(text) || 0) + 1);
    return query.apply(this, args);
  };
  let seq = 0;
  process.on('SIGUSR2', () => {
    const file = path.join(dir, `${process.pid}.json`);
    fs.writeFileSync(`${file}.tmp`, JSON.stringify({ seq: ++seq, counts: Object.fromEntries(counts) }));
    fs.renameSync(`${file}.tmp`, file);
  });
}
