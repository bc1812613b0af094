import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { withTransaction } from '../../db/pool';
import { WriteUnit } from '../../db/write-unit';
import { createTemporalClient } from '../../engine/temporal/client';
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

  /** The error's message, or its cause's (the SDK may wrap what the gRPC call threw). */
  const messages = (err: unknown) => {
    const e = err as Error & { cause?: Error };
    return `${e.message} / ${e.cause?.message ?? ''}`;
  };

  it('a Temporal call made inside a transaction or an open write unit fails at once; outside them it is made', async () => {
    const database = await createTestDatabase(suite, POOL);
    const { config, db } = await startTestApp(suite, { TEMPORAL_ADDRESS: await silentServer(suite) }, database);
    const temporal = createTemporalClient(config);
    onCleanup(suite, () => temporal.close());
    const describeRun = () => temporal.connection.withDeadline(Date.now() + 1_000, () => temporal.client.workflow.getHandle('run:none').describe());
    const refused = /Temporal call \/temporal\.api\.workflowservice\.v1\.WorkflowService\/DescribeWorkflowExecution made while a pooled database connection is held/;

    const inTransaction = await withTransaction(db, () => describeRun()).then(() => assert.fail('answered'), messages);
    assert.match(inTransaction, refused);
    const unit = await WriteUnit.begin(db);
    const inUnit = await unit.run(() => describeRun()).then(() => assert.fail('answered'), messages);
    await unit.rollback();
    assert.match(inUnit, refused);
    // Outside both, the call is made (and waits for the silent server until its deadline).
    const outside = await describeRun().then(() => assert.fail('answered'), messages);
    assert.doesNotMatch(outside, /pooled database connection/);
  });

  it("a cron trigger's schedule sync waiting on a silent Temporal leaves a pool of one to everyone else", async () => {
    const database = await createTestDatabase(suite, 1);
    const { app } = await startTestApp(suite, { TEMPORAL_ADDRESS: await silentServer(suite) }, database);
    const attacker = await registerUser(app);
    const victim = await registerUser(app);
    await api(app, attacker).ok('POST', '/api/user-triggers', { type: 'cron', name: 'hourly', configJson: { cronExpression: '@hourly' } });
    // The commit handed its schedule sync to Temporal, which does not answer for the sync's 10 s deadline.
    await new Promise((r) => setTimeout(r, 500));
    // Were the sync holding the pool's one connection meanwhile, these would wait for it past
    // DATABASE_CONNECT_TIMEOUT_MS and answer 503.
    const read = await api(app, victim).get('/api/agents');
    const write = await api(app, victim).post('/api/agents', { name: 'mine' });
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(write.statusCode, 201, write.body);
  });

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
