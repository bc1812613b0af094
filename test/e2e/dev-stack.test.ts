import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { DEV_STACK_RETENTION, startTemporalDevServer } from '../../scripts/temporal-dev-server';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { onCleanup } from '../helpers/cleanup';
import { testEnv } from '../helpers/config';
import { createTestDatabase } from '../helpers/database';
import { testNamespace } from '../helpers/namespace';
import { freePort, startProcess, waitFor } from '../helpers/processes';
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
