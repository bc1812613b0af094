import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DEV_STACK_RETENTION, startTemporalDevServer } from '../../scripts/temporal-dev-server';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { onCleanup } from '../helpers/cleanup';
import { testEnv } from '../helpers/config';
import { createTestDatabase } from '../helpers/database';
import { testNamespace } from '../helpers/namespace';
import { freePort, startProcess, waitFor, type RunningProcess } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';

/** The pids of `root`'s descendants whose command line contains `needle`. */
function descendants(root: number, needle: string): number[] {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }));
  const found: number[] = [];
  const visit = (pid: number) => {
    for (const row of rows.filter((r) => r.ppid === pid)) {
      if (row.args.includes(needle)) found.push(row.pid);
      visit(row.pid);
    }
  };
  visit(root);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm start (scripts/dev-stack.ts): its supervisor', () => {
  it('restarts a worker killed with SIGKILL, the stack keeps serving, and SIGINT still stops everything', async (t) => {
    const database = await createTestDatabase(t);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    // Given Postgres, Temporal and the secrets, the stack uses nothing under .data/ (and takes no lock there);
    // TEMPORAL_RETENTION is then the given server's business, not checked, and said to be ignored.
    const stack = startProcess(
      'scripts/dev-stack.ts',
      testEnv(database.url, {
        TEMPORAL_NAMESPACE: testNamespace(__filename), PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: base, LOG_LEVEL: 'info', WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s',
        TEMPORAL_RETENTION: '5s',
      }),
    );
    onCleanup(t, () => stack.stop('SIGKILL'));
    const failWith = (err: unknown) => {
      throw new Error(`${err}\n--- npm start output ---\n${stack.output()}`);
    };
    const polls = () => stack.output().split('polling task queue').length - 1;
    await waitFor('npm start to say it is running', async () => stack.output().includes('Agent Platform is running'), 120_000).catch(failWith);
    await waitFor('the worker to poll', async () => polls() === 1, 60_000).catch(failWith);
    assert.ok(stack.output().includes('TEMPORAL_RETENTION is ignored: the Temporal server at TEMPORAL_ADDRESS keeps'), stack.output());
    const pid = stack.child.pid!;
    const [worker] = descendants(pid, 'worker/main.ts');
    const [apiPid] = descendants(pid, 'api/server.ts');
    assert.ok(worker && apiPid, `worker and API processes under npm start: ${stack.output()}`);

    process.kill(worker, 'SIGKILL');
    await waitFor('the restart to be announced', async () => stack.output().includes('worker was killed by SIGKILL; restarting it in 1 s'), 10_000).catch(failWith);
    const restarted = await waitFor('a new worker process', async () => descendants(pid, 'worker/main.ts').find((p) => p !== worker), 30_000).catch(failWith);
    await waitFor('the new worker to poll', async () => polls() === 2, 60_000).catch(failWith);
    assert.deepEqual(descendants(pid, 'api/server.ts'), [apiPid], 'the API ran on, untouched');

    // Served after the restart, through the new worker: a hook's delivery whose first attempt (the API's) is
    // refused is made again by its workflow, which only a worker runs.
    const receiver = await startReceiver(t, (_req, i) => ({ status: i === 0 ? 503 : 200 }));
    const user = await registerUser(base, 'dev-stack@example.com');
    const outgoing = await api(base, user).ok('POST', '/api/webhooks', { name: 'out', url: `${receiver.url}/hook`, events: ['webhook.received'] });
    const incoming = await api(base, user).ok('POST', '/api/webhooks', { name: 'in', direction: 'incoming' });
    assert.equal((await api(base).post(`/api/hooks/webhooks/${incoming.id}`, '{"after":"restart"}')).statusCode, 202);
    await waitFor('the hook delivered', async () => {
      const { rows } = await database.db.query(`SELECT status FROM deliveries WHERE webhook_id = $1`, [outgoing.id]);
      return rows[0]?.status === 'succeeded';
    }, 30_000).catch(failWith);
    assert.equal(receiver.requests.length, 2);

    assert.equal(await stack.stop('SIGINT', 60_000), 0, stack.output());
    assert.match(stack.output(), /\[dev\] stopped\n/);
    for (const p of [restarted, apiPid]) assert.equal(alive(p), false, `process ${p} left running`);
  });
});

describe('npm start: the Temporal data it keeps', () => {
  it('refuses a TEMPORAL_RETENTION the namespace cannot have, before it takes or starts anything', async (t) => {
    const database = await createTestDatabase(t);
    for (const [value, reason] of <Array<[string, string]>>[
      ['5s', 'TEMPORAL_RETENTION is 5s; use a duration from 1m to 30d'],
      ['31d', 'TEMPORAL_RETENTION is 31d; use a duration from 1m to 30d'],
      ['15 minutes', 'TEMPORAL_RETENTION "15 minutes" is not a duration'],
    ]) {
      const stack = startProcess('scripts/dev-stack.ts', { ...testEnv(database.url), TEMPORAL_ADDRESS: '', TEMPORAL_RETENTION: value, PORT: String(await freePort()) });
      onCleanup(t, () => stack.stop('SIGKILL'));
      await waitFor('npm start to give up', async () => stack.child.exitCode !== null, 60_000);
      assert.equal(stack.child.exitCode, 1, stack.output());
      assert.ok(stack.output().includes(reason), stack.output());
      assert.doesNotMatch(stack.output(), /starting/, 'nothing was started');
    }
  });

  it(`gives the dev server's namespace a retention under Temporal's least of an hour (npm start: ${DEV_STACK_RETENTION})`, async (t) => {
    const temporal = await startTemporalDevServer({ port: await freePort(), retention: DEV_STACK_RETENTION, onLine: () => {}, log: () => {} });
    onCleanup(t, () => temporal.stop());
    const { config } = await temporal.env.connection.workflowService.describeNamespace({ namespace: 'default' });
    assert.equal(Number(config?.workflowExecutionRetentionTtl?.seconds), 15 * 60);
  });
});

/** When the process exited, with its code, once its output is all read (listening from the moment this is called). */
function exitOf(stack: RunningProcess): Promise<{ code: number | null; at: number }> {
  return new Promise((resolve) => {
    let at = 0;
    stack.child.once('exit', () => (at = Date.now()));
    stack.child.once('close', (code) => resolve({ code, at }));
  });
}

/** When the process's output first holds `text` (listening from the moment this is called). */
function momentOf(stack: RunningProcess, text: string): Promise<number> {
  return new Promise((resolve) => {
    const check = () => {
      if (!stack.output().includes(text)) return;
      stack.child.stdout!.off('data', check);
      stack.child.stderr!.off('data', check);
      resolve(Date.now());
    };
    stack.child.stdout!.on('data', check);
    stack.child.stderr!.on('data', check);
  });
}

describe('npm start: a start-up that fails or is interrupted ends', () => {
  it('stops with exit code 1 within 10 s, naming the reason and the fix, when embedded Postgres cannot use its data directory', async (t) => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'dev-stack-pg-'));
    fs.chmodSync(base, 0o755);
    onCleanup(t, () => fs.rmSync(base, { recursive: true, force: true }));
    // As root, Postgres runs as the `postgres` user, which cannot pass a directory of mode 0700 that root owns
    // (as /root is); as anyone else, nothing can be made inside a directory of mode 0500.
    const asRoot = process.getuid?.() === 0;
    const closed = path.join(base, 'closed');
    fs.mkdirSync(closed, { mode: asRoot ? 0o700 : 0o500 });
    const dataDir = path.join(closed, 'postgres');
    // DATABASE_URL unset: embedded Postgres; Temporal and the secrets are given, so it is the first thing started.
    const started = Date.now();
    const stack = startProcess('scripts/dev-stack.ts', { ...testEnv(''), DATABASE_URL: '', EMBEDDED_POSTGRES_DIR: dataDir, PORT: String(await freePort()) });
    const exited = exitOf(stack);
    const reported = momentOf(stack, 'Embedded Postgres cannot keep its data in');
    onCleanup(t, () => stack.stop('SIGKILL'));
    const failWith = (err: unknown) => {
      throw new Error(`${err}\n--- npm start output ---\n${stack.output()}`);
    };
    const { code, at } = await Promise.race([exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('still running 60 s after its launch')), 60_000))]).catch(failWith);
    const reportedAt = await Promise.race([reported, Promise.resolve(NaN)]);
    assert.ok(reportedAt > 0, `the failure was reported: ${stack.output()}`);
    console.log(`npm start: failure reported ${reportedAt - started} ms after launch, exited ${at - reportedAt} ms after that (limit 10000)`);
    assert.equal(code, 1, stack.output());
    assert.ok(at - reportedAt < 10_000, `exited ${at - reportedAt} ms after the failure`);
    const output = stack.output();
    assert.ok(output.includes(`Embedded Postgres cannot keep its data in ${dataDir}: `), output);
    assert.match(output, asRoot ? /the `postgres` user that Postgres runs as \(uid \d+\) cannot reach / : /this user cannot write to /);
    assert.ok(output.includes('Set EMBEDDED_POSTGRES_DIR to a directory it can use (or unset it to use .data/postgres), or set DATABASE_URL to use a Postgres of your own.'), output);
    assert.equal(fs.existsSync(dataDir), false, 'nothing was made for it');
    assert.doesNotMatch(output, /initialising|starting the worker/);
  });

  it('opens the database for its migrations as the API and the worker will: with PGSSLMODE and PGSSLROOTCERT read as they read them', async (t) => {
    const database = await createTestDatabase(t);
    // pg on its own reads PGSSLMODE (not PGSSLROOTCERT) and would try TLS; the processes' settings read the root
    // certificate first and refuse its absence in one line naming it, before any connection.
    const missing = path.join(os.tmpdir(), `no-such-root-${process.pid}.pem`);
    const stack = startProcess('scripts/dev-stack.ts', testEnv(database.url, { PGSSLMODE: 'require', PGSSLROOTCERT: missing, PORT: String(await freePort()) }));
    onCleanup(t, () => stack.stop('SIGKILL'));
    await waitFor('npm start to give up, or to go past the migrations', async () => stack.child.exitCode !== null || stack.output().includes('starting the worker'), 60_000);
    const output = stack.output();
    assert.ok(output.includes(`Could not prepare the database at ${database.url}: Invalid configuration:`), output);
    assert.ok(output.includes(`DATABASE_URL (or PGSSLMODE, PGSSLROOTCERT, PGSSLCERT, PGSSLKEY): ENOENT: no such file or directory, open '${missing}'`), output);
    assert.doesNotMatch(output, /does not support SSL|starting the worker/);
    await waitFor('npm start to exit', async () => stack.child.exitCode !== null, 30_000);
    assert.equal(stack.child.exitCode, 1, output);
  });

  it('stops within 10 s on Ctrl-C while a start-up step would never finish (a database that never answers)', async (t) => {
    // A server that accepts connections and never says a word: the migrations' connection waits for ever.
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    onCleanup(t, () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const { port } = silent.address() as net.AddressInfo;
    const stack = startProcess('scripts/dev-stack.ts', testEnv(`postgres://nobody:secret@127.0.0.1:${port}/silent`, { PORT: String(await freePort()) }));
    const exited = exitOf(stack);
    onCleanup(t, () => stack.stop('SIGKILL'));
    const failWith = (err: unknown) => {
      throw new Error(`${err}\n--- npm start output ---\n${stack.output()}`);
    };
    await waitFor('the migrations to begin', async () => stack.output().includes('applying database migrations'), 60_000).catch(failWith);
    await waitFor('the database to be connected to', async () => sockets.size > 0, 30_000).catch(failWith);
    const interruptedAt = Date.now();
    stack.child.kill('SIGINT');
    const { code, at } = await Promise.race([exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('still running 30 s after SIGINT')), 30_000))]).catch(failWith);
    console.log(`npm start: exited ${at - interruptedAt} ms after SIGINT (limit 10000)`);
    assert.equal(code, 0, stack.output());
    assert.ok(at - interruptedAt < 10_000, `exited ${at - interruptedAt} ms after SIGINT`);
    assert.match(stack.output(), /\[dev\] start-up interrupted\n[\s\S]*\[dev\] stopped\n/);
    assert.ok(!stack.output().includes('secret'), 'the password is not shown');
  });
});
