import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { workflowIds } from '../../engine/temporal/names';
import { RUN_SLOT_FREED_SIGNAL } from '../../engine/contract';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { onCleanup, type Cleanup } from '../helpers/cleanup';
import { startEngine } from '../helpers/engine';
import { startModelServer, textReply, toolCallsReply } from '../helpers/model-server';
import { waitFor } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';

/** A tool endpoint on loopback that holds every call until `release()`. */
async function startHeldTool(t: Cleanup) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  const server = http.createServer((req, res) => {
    calls++;
    req.resume();
    void released.then(() => res.end('{"done":true}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(t, () => {
    release();
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, release, calls: () => calls };
}

/**
 * A decided approval in a full line (docs/architecture.md § Approvals): the run goes back into its
 * account's line (RUN_CONCURRENCY_PER_ACCOUNT), and the end of another run of the account wakes it
 * (`runSlotFreed`) as it wakes a queued run, not its own minute-long recheck.
 */
describe('approvals and the run line', () => {
  it('a decided run waiting for a slot is woken when a run of its account ends', async (t) => {
    const models = await startModelServer(t);
    const service = await startReceiver(t, () => ({ body: { paid: true } }));
    const held = await startHeldTool(t);
    const h = await startEngine(t, __filename, { MODEL_BASE_URL: models.baseUrl, MODEL_API_KEY: 'sk-test', INITIAL_BALANCE: '100000', RUN_CONCURRENCY_PER_ACCOUNT: '1' });
    const user = await registerUser(h.app);
    const client = api(h.app, user);

    // Run A waits for approval: it holds no slot.
    models.script('m-line', (_call, n) => (n === 0 ? toolCallsReply([{ id: 'call_1', name: 'pay', arguments: { amount: 5 } }]) : textReply('paid')));
    const payer = await client.ok('POST', '/api/agents', { name: 'payer', configJson: { model: 'm-line', approvalTimeout: '1h' } });
    await client.ok('POST', `/api/agents/${payer.id}/tools`, { type: 'custom', name: 'pay', requiresApproval: true, configJson: { endpoint: `${service.url}/pay` } });
    const a = await client.ok('POST', `/api/agents/${payer.id}/runs`, { input: 'pay' });
    await waitFor('run A to wait', async () => (await client.ok('GET', `/api/runs/${a.id}`)).status === 'waiting', 30_000);
    const [approval] = await client.ok('GET', `/api/runs/${a.id}/approvals`);

    // Run B takes the account's one slot: its tool call is held.
    const holder = await client.ok('POST', '/api/agents', { name: 'holder' });
    await client.ok('POST', `/api/agents/${holder.id}/tools`, { type: 'custom', name: 'hold', configJson: { endpoint: `${held.url}/hold` } });
    const b = await client.ok('POST', `/api/agents/${holder.id}/runs`, { input: 'hold' });
    await waitFor('run B to hold the slot', async () => held.calls() === 1, 30_000);

    // A is approved while the line is full: its workflow reads the decision and goes back into the line.
    await client.ok('POST', `/api/approvals/${approval.id}/decision`, { decision: 'approve' });
    const handle = h.engine.client.workflow.getHandle(workflowIds.run(a.id));
    const resumeAttempted = async () => {
      const events = (await handle.fetchHistory()).events ?? [];
      const signalled = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'approvalDecided');
      return signalled >= 0 && events.slice(signalled).some((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    };
    await waitFor("A's workflow to read its decision", resumeAttempted, 30_000);
    assert.equal((await client.ok('GET', `/api/runs/${a.id}`)).status, 'queued', 'A is queued for the slot B holds');
    assert.equal(service.requests.length, 0);

    // B ends: its slot wakes A, which finishes.
    held.release();
    await waitFor('run B to end', async () => (await client.ok('GET', `/api/runs/${b.id}`)).status === 'succeeded', 30_000);
    const done = await waitFor('run A to end', async () => {
      const shown = await client.ok('GET', `/api/runs/${a.id}`);
      return ['succeeded', 'failed'].includes(shown.status) && shown;
    }, 90_000);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(service.requests.length, 1);
    const events = (await handle.fetchHistory()).events ?? [];
    const woken = events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === RUN_SLOT_FREED_SIGNAL);
    assert.ok(woken.length >= 1, "A was not woken by B's end (runSlotFreed): it waited for its own recheck");
  });
});
