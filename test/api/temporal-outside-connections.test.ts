import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser, startTestApp } from '../helpers/app';
import { onCleanup, suiteContext } from '../helpers/cleanup';
import { createTestDatabase } from '../helpers/database';

const POOL = 5;
const CANCELS = 10;

/** A "Temporal" that takes connections and never answers a byte: every call waits for its deadline. */
async function silentServer(t: Parameters<typeof onCleanup>[0]): Promise<string> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(t, () => {
    sockets.forEach((s) => s.destroy());
    server.close();
  });
  return `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

/**
 * No call to Temporal while a pooled database connection is held (docs/architecture.md § Limits and fairness):
 * ten concurrent cancels with distinct Idempotency-Keys while Temporal does not answer each wait out their 5 s
 * deadline, on a pool of five connections, and another account's reads and writes go on meanwhile.
 */
describe('Temporal calls hold no database connection', () => {
  const suite = suiteContext();

  it(`${CANCELS} keyed cancels waiting on a silent Temporal leave a pool of ${POOL} to everyone else; each answers 503, its key free again`, async () => {
    const database = await createTestDatabase(suite, POOL);
    const { app, db } = await startTestApp(suite, { TEMPORAL_ADDRESS: await silentServer(suite) }, database);
    const attacker = await registerUser(app);
    const victim = await registerUser(app);
    const agent = await api(app, attacker).ok('POST', '/api/agents', { name: 'stuck' });
    const runs = [];
    for (let i = 0; i < CANCELS; i++) runs.push(await api(app, attacker).ok('POST', `/api/agents/${agent.id}/runs`, {}));
    // A run that began has a workflow to cancel: the cancel must ask Temporal.
    await db.query(`UPDATE runs SET status = 'running', started_at = now() WHERE agent_id = $1`, [agent.id]);

    const cancels = runs.map((run, i) => api(app, attacker).post(`/api/runs/${run.id}/cancel`, undefined, { 'idempotency-key': `cancel-${i}` }));
    await new Promise((r) => setTimeout(r, 500));
    const started = performance.now();
    const read = await api(app, victim).get('/api/agents');
    const write = await api(app, victim).post('/api/agents', { name: 'mine' });
    const took = performance.now() - started;
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(write.statusCode, 201, write.body);
    assert.ok(took < 2_000, `another account's read and write took ${Math.round(took)} ms while the cancels waited on Temporal`);

    const answers = await Promise.all(cancels);
    assert.deepEqual(answers.map((r) => r.statusCode), Array(CANCELS).fill(503), answers.map((r) => r.body).join('\n'));
    // A 503 is not kept: the same key may be sent again (and is answered afresh, not "in progress").
    const again = await api(app, attacker).post(`/api/runs/${runs[0].id}/cancel`, undefined, { 'idempotency-key': 'cancel-0' });
    assert.equal(again.statusCode, 503, again.body);
    assert.equal(again.headers['idempotent-replayed'], undefined);
  });
});
