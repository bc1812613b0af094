import assert from 'node:assert/strict';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { onCleanup } from '../helpers/cleanup';
import { processEnv } from '../helpers/config';
import { createTestDatabase } from '../helpers/database';
import { freePort, startProcess, waitFor, waitForApi } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';
import { openSse } from '../helpers/sse';

/**
 * Ready vs alive, and draining on SIGTERM within SHUTDOWN_GRACE_MS, with the real processes: the worker
 * lets a delivery attempt in flight finish; the API finishes a request still uploading and ends a live stream.
 */

const GRACE_MS = 8_000;
/** What the exit may take past the work it waits for: closing the connections and the pool. */
const SLACK_MS = 3_000;

/** A receiver's handler: each delivery's first attempt refused (503), its later ones answered 200 after `delayMs`. */
function refusedFirstThenAnsweredAfter(delayMs: number) {
  const seen = new Set<string>();
  return (req: { headers: Record<string, string | string[] | undefined> }) => {
    const id = String(req.headers['webhook-id']);
    if (seen.has(id)) return { status: 200, delayMs };
    seen.add(id);
    return { status: 503 };
  };
}

describe('ready vs alive; drain on SIGTERM', () => {
  it('the worker: /health alive, /ready once polling; on SIGTERM an activity in flight finishes, then it exits 0', async (t) => {
    const database = await createTestDatabase(t);
    const port = await freePort();
    const healthPort = await freePort();
    const base = `http://127.0.0.1:${port}`;
    // The first attempt (the API's own) is refused; the retry, an activity of the worker, is answered after 3 s.
    const receiver = await startReceiver(t, refusedFirstThenAnsweredAfter(3_000));
    const env = processEnv(database.url, __filename, port, {
      WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s',
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
    });
    const apiProcess = startProcess('api/server.ts', env);
    onCleanup(t, () => apiProcess.stop('SIGKILL'));
    // The flag, over WORKER_HEALTH_PORT (a port that is taken would stop it).
    const worker = startProcess('worker/main.ts', { ...env, WORKER_HEALTH_PORT: String(port) }, ['--health-port', String(healthPort)]);
    onCleanup(t, () => worker.stop('SIGKILL'));
    const health = `http://127.0.0.1:${healthPort}`;
    await waitFor('the worker to answer /health', async () => (await fetch(`${health}/health`)).status === 200, 60_000);
    await waitFor('the worker to be ready', async () => (await fetch(`${health}/ready`)).status === 200, 60_000).catch((err) => {
      throw new Error(`${err}\n${worker.output()}`);
    });
    await waitForApi(base, apiProcess);
    assert.equal((await fetch(`${base}/api/health/ready`)).status, 200);

    const user = await registerUser(base);
    const webhook = await api(base, user).post('/api/webhooks', { name: 'slow', url: `${receiver.url}/hook`, events: ['agent.created'] });
    assert.equal(webhook.statusCode, 201, webhook.body);
    assert.equal((await api(base, user).post('/api/agents', { name: 'drained' })).statusCode, 201);
    await waitFor('the worker\'s attempt in flight', async () => receiver.requests.length >= 2 && receiver.load.inFlight === 1, 30_000);

    const signalled = Date.now();
    worker.child.kill('SIGTERM');
    await sleep(300);
    const draining = await fetch(`${health}/ready`);
    assert.equal(draining.status, 503, 'not ready while draining');
    assert.deepEqual(await draining.json(), { ok: false, message: 'shutting down' });
    assert.equal(await worker.stop('SIGTERM', GRACE_MS + SLACK_MS + 5_000), 0, worker.output());
    const exitedAfter = Date.now() - signalled;
    assert.ok(exitedAfter < GRACE_MS + SLACK_MS, `exited ${exitedAfter} ms after SIGTERM`);
    assert.ok(exitedAfter >= 2_000, `exited ${exitedAfter} ms after SIGTERM: before the attempt in flight could finish`);
    assert.equal(receiver.requests[1]!.aborted, undefined, 'the attempt in flight was answered, not cut');
    const rows = await database.db.query(`SELECT status FROM deliveries`);
    assert.deepEqual(rows.rows.map((r) => r.status), ['succeeded'], 'the attempt\'s outcome was recorded before the exit');
    console.log(`worker: exited ${exitedAfter} ms after SIGTERM, an attempt of 3 s in flight (grace ${GRACE_MS} ms)`);
  });

  it('the worker: an activity still in flight when the grace ends is cancelled, and the worker exits 0 then', async (t) => {
    const grace = 2_000;
    const database = await createTestDatabase(t);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    // The retry, an activity of the worker, would be answered after 20 s: far past the grace.
    const receiver = await startReceiver(t, refusedFirstThenAnsweredAfter(20_000));
    const env = processEnv(database.url, __filename, port, {
      WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s',
      WEBHOOK_TIMEOUT_MS: '30000',
      SHUTDOWN_GRACE_MS: String(grace),
    });
    const apiProcess = startProcess('api/server.ts', env);
    onCleanup(t, () => apiProcess.stop('SIGKILL'));
    const worker = startProcess('worker/main.ts', env);
    onCleanup(t, () => worker.stop('SIGKILL'));
    await waitForApi(base, apiProcess);
    const user = await registerUser(base);
    assert.equal((await api(base, user).post('/api/webhooks', { name: 'stuck', url: `${receiver.url}/hook`, events: ['agent.created'] })).statusCode, 201);
    assert.equal((await api(base, user).post('/api/agents', { name: 'cut' })).statusCode, 201);
    await waitFor('the worker\'s attempt in flight', async () => receiver.requests.length >= 2 && receiver.load.inFlight === 1, 60_000);
    const signalled = Date.now();
    assert.equal(await worker.stop('SIGTERM', grace + SLACK_MS + 10_000), 0, worker.output());
    const exitedAfter = Date.now() - signalled;
    assert.ok(exitedAfter < grace + SLACK_MS, `exited ${exitedAfter} ms after SIGTERM (grace ${grace} ms)`);
    await waitFor('the attempt cut', async () => receiver.requests[1]!.aborted === true, 5_000);
    // The cut attempt is no answer of the receiver's: only the first (503) is recorded; Temporal makes the cut one again.
    const attempts = await database.db.query(`SELECT status_code FROM delivery_attempts`);
    assert.deepEqual(attempts.rows.map((r) => r.status_code), [503]);
    console.log(`worker: exited ${exitedAfter} ms after SIGTERM, an attempt of 20 s cut at the grace (${grace} ms)`);
  });

  it('the API: on SIGTERM a request still uploading is answered, a live run stream ends, then it exits 0', async (t) => {
    const database = await createTestDatabase(t);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = processEnv(database.url, __filename, port, {
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
    });
    // No worker: the run stays queued, so its stream stays open until the API ends it.
    const apiProcess = startProcess('api/server.ts', env);
    onCleanup(t, () => apiProcess.stop('SIGKILL'));
    await waitForApi(base, apiProcess);
    const user = await registerUser(base);
    const agent = await api(base, user).ok('POST', '/api/agents', { name: 'hooked' });
    const trigger = await api(base, user).ok('POST', `/api/agents/${agent.id}/triggers`, { name: 'hook', type: 'webhook' });
    const run = await api(base, user).ok('POST', `/api/agents/${agent.id}/runs`, { input: {} });
    const stream = await openSse(`${base}/api/runs/${run.id}/events`, user.auth);
    assert.equal(stream.status, 200);

    // A hook request whose body arrives in two parts, 1.5 s apart: in flight when the signal comes.
    const body = JSON.stringify({ order: 42, note: 'x'.repeat(1000) });
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${base}/api/hooks/triggers/${trigger.configJson.webhookPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-trigger-token': trigger.configJson.secretToken },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 500));
      setTimeout(() => req.end(body.slice(500)), 1_500);
    });
    await sleep(300);
    const signalled = Date.now();
    const exited = apiProcess.stop('SIGTERM', GRACE_MS + SLACK_MS + 5_000);
    const hook = await answered;
    assert.equal(hook.status, 202, hook.body);
    await stream.ended;
    assert.equal(await exited, 0, apiProcess.output());
    const exitedAfter = Date.now() - signalled;
    // The upload ends 1.2 s after the signal: the API waits for it, and for nothing else (an idle keep-alive connection is closed).
    assert.ok(exitedAfter >= 1_000 && exitedAfter < 1_200 + SLACK_MS, `exited ${exitedAfter} ms after SIGTERM`);
    const fires = await database.db.query(`SELECT count(*)::int AS n FROM fires`);
    assert.equal(fires.rows[0].n, 1, 'the hook accepted while draining was recorded');
    console.log(`api: exited ${exitedAfter} ms after SIGTERM, a request uploading for 1.5 s in flight`);
  });
});
