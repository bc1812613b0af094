import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, type TestContext } from 'node:test';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { onCleanup } from '../helpers/cleanup';
import { testEnv } from '../helpers/config';
import { createTestDatabase } from '../helpers/database';
import { testNamespace } from '../helpers/namespace';
import { freePort, startProcess, waitFor, waitForApi } from '../helpers/processes';
import { proxyToDatabase } from '../helpers/tcp-proxy';

/**
 * A database that goes away is an outage, not a server error: the real API on a TCP proxy in front of
 * Postgres, hook requests sent at a steady rate while the proxy is cut (every connection dropped, new ones
 * refused) and restored. Every answer is 202 or 503 with Retry-After; every 202 was recorded.
 */

const RATE_PER_SECOND = 20;

/** The real API on a TCP proxy in front of a fresh database of its own. */
async function apiBehindProxy(t: TestContext, overrides: Record<string, string> = {}) {
  const database = await createTestDatabase(t);
  const { proxy, url: proxied } = await proxyToDatabase(t, database.url);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const apiProcess = startProcess(
    'api/server.ts',
    testEnv(proxied, { TEMPORAL_NAMESPACE: testNamespace(__filename), PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: base, LOG_LEVEL: 'warn', ...overrides }),
  );
  onCleanup(t, () => apiProcess.stop('SIGKILL'));
  await waitForApi(base, apiProcess);
  return { database, proxy, base, apiProcess };
}

describe('a database outage', () => {
  it('answers 503 { message } with Retry-After while Postgres is unreachable, never 500; nothing accepted is lost', async (t) => {
    const { database, proxy, base, apiProcess } = await apiBehindProxy(t);
    const user = await registerUser(base);
    const agent = await api(base, user).ok('POST', '/api/agents', { name: 'outage' });
    const trigger = await api(base, user).ok('POST', `/api/agents/${agent.id}/triggers`, { name: 'hook', type: 'webhook' });

    const answers: Array<{ status: number; retryAfter: string | null; body: string; i: number }> = [];
    // A request whose COMMIT reached Postgres just as its connection was cut (or its backend terminated)
    // cannot learn that it committed: it answers 503, yet its fire is recorded. Only a request in flight at
    // that instant can be one; every other 503 must have recorded nothing.
    const pending = new Set<number>();
    const inFlightAtBreak = new Set<number>();
    const send = async (i: number) => {
      pending.add(i);
      const res = await fetch(`${base}/api/hooks/triggers/${trigger.configJson.webhookPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-trigger-token': trigger.configJson.secretToken },
        body: JSON.stringify({ i }),
      });
      answers.push({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text(), i });
      pending.delete(i);
    };
    const inFlight: Promise<void>[] = [];
    let ready503: { status: number; body: string } | undefined;
    const started = Date.now();
    let terminated = 0;
    // Each phase starts once, at the first request on or after its time: a loaded machine's loop can step over
    // any window narrower than its slowest turn.
    let cut = false;
    let firstAfterRestore = Infinity; // the index of the first request sent once the proxy was restored
    for (let i = 0; Date.now() - started < 7_000; i++) {
      const at = Date.now() - started;
      if (at >= 2_000 && !cut) {
        cut = true;
        for (const i of pending) inFlightAtBreak.add(i);
        await proxy.cut();
      }
      if (at >= 2_500 && !ready503) {
        const res = await fetch(`${base}/api/health/ready`);
        ready503 = { status: res.status, body: await res.text() };
      }
      if (at >= 4_000 && firstAfterRestore === Infinity) {
        await proxy.restore();
        firstAfterRestore = i;
      }
      // Then as a restarting server does: every backend of the API ends with 57P01 (admin_shutdown).
      if (at >= 5_500 && terminated === 0) {
        for (const i of pending) inFlightAtBreak.add(i);
        const { rows } = await database.db.query<{ n: number }>(
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
        );
        terminated = rows[0]!.n;
      }
      inFlight.push(send(i));
      await sleep(1_000 / RATE_PER_SECOND);
    }
    await Promise.all(inFlight);

    const byStatus = new Map<number, number>();
    for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    console.log(`hook requests at ${RATE_PER_SECOND}/s, a 2 s outage and ${terminated} backends terminated: ${[...byStatus].map(([s, n]) => `${s}×${n}`).join(' ')}`);
    for (const a of answers) {
      assert.ok(a.status === 202 || a.status === 503, `request ${a.i}: ${a.status} ${a.body}`);
      if (a.status === 503) {
        assert.equal(a.retryAfter, '5', `request ${a.i}: 503 without Retry-After`);
        assert.deepEqual(JSON.parse(a.body), { message: 'The database is unavailable; try again in 5 s' });
      }
    }
    assert.ok((byStatus.get(503) ?? 0) >= 10, 'the outage was seen');
    assert.ok((byStatus.get(202) ?? 0) >= 40, 'requests were accepted before and after it');
    assert.ok(answers.some((a) => a.status === 202 && a.i >= firstAfterRestore), 'requests were accepted once it was over');
    assert.equal(ready503?.status, 503, 'not ready during the outage');
    assert.match(JSON.parse(ready503!.body).message, /^Postgres did not answer/);
    assert.equal((await fetch(`${base}/api/health/ready`)).status, 200, 'ready again');

    // Every accepted request was recorded: one fire per 202, with its body, none twice. A fire beyond them
    // is only one of a request in flight when the connections broke (its commit's answer lost).
    const fires = await database.db.query<{ payload: { i: number } }>(`SELECT payload FROM fires WHERE trigger_id = $1`, [trigger.id]);
    const recorded = fires.rows.map((r) => r.payload.i).sort((x, y) => x - y);
    const accepted = answers.filter((a) => a.status === 202).map((a) => a.i).sort((x, y) => x - y);
    assert.equal(new Set(recorded).size, recorded.length, `a request recorded twice: ${recorded.join(',')}`);
    const lost = accepted.filter((i) => !recorded.includes(i));
    assert.deepEqual(lost, [], 'accepted but not recorded');
    const beyond = recorded.filter((i) => !accepted.includes(i));
    assert.ok(
      beyond.every((i) => inFlightAtBreak.has(i)),
      `recorded though refused, and not in flight when the connections broke: ${beyond.filter((i) => !inFlightAtBreak.has(i)).join(',')} (in flight then: ${[...inFlightAtBreak].join(',')})`,
    );
    assert.ok(!/"statusCode":500|Internal server error/.test(apiProcess.output()), apiProcess.output());
  });

  it('a database host that drops packets: 503 once no connection comes within DATABASE_CONNECT_TIMEOUT_MS, not a request that hangs', async (t) => {
    const { base, proxy } = await apiBehindProxy(t, { DATABASE_CONNECT_TIMEOUT_MS: '1000' });
    const user = await registerUser(base);
    const agent = await api(base, user).ok('POST', '/api/agents', { name: 'held' });
    // Every open connection is dropped; new ones are accepted and never answered.
    proxy.hold();
    await sleep(200); // the pool has seen its connections end
    const read = () => fetch(`${base}/api/agents/${agent.id}`, { headers: { authorization: `Bearer ${user.accessToken}` }, signal: AbortSignal.timeout(15_000) });
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 12 }, read)); // more than the pool holds: some wait for a slot
    const waited = Date.now() - started;
    // The setting is what they waited for, not the 5 s default (nor a hang, which the signal ends at 15 s).
    assert.ok(waited < 4_000, `answered after ${waited} ms with DATABASE_CONNECT_TIMEOUT_MS=1000`);
    for (const res of answers) {
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '5');
      assert.deepEqual(await res.json(), { message: 'The database is unavailable; try again in 5 s' });
    }
    await proxy.restore();
    await waitFor('reads answered again', async () => (await read()).status === 200, 15_000);
  });
});
