import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { registerUser, type TestUser } from '../helpers/app';
import { joinWorkspace } from '../helpers/workspaces';
import { suiteContext } from '../helpers/cleanup';
import { startEngine, type EngineHarness } from '../helpers/engine';
import { startModelServer, textReply, toolCallsReply, type ModelServer } from '../helpers/model-server';
import { waitFor } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';

/**
 * Approvals (docs/api.md § Approvals) through the whole engine: a model asks for a tool that requires
 * approval → the run waits → a decision through the API → the run goes on (the tool called with the
 * approved arguments, or the model told of the rejection); expiry and cancel of a waiting run.
 */
describe('approvals', () => {
  const suite = suiteContext();
  let h: EngineHarness;
  let models: ModelServer;
  let service: Receiver;
  let user: TestUser;

  before(async () => {
    models = await startModelServer(suite);
    service = await startReceiver(suite, (req) => ({ body: { sent: JSON.parse(req.body || 'null') } }));
    h = await startEngine(suite, __filename, { MODEL_BASE_URL: models.baseUrl, MODEL_API_KEY: 'sk-test', INITIAL_BALANCE: '100000', APPROVAL_TIMEOUT: '3s' });
    user = await registerUser(h.app);
  });

  const api = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>, u = user) =>
    h.app.inject({ method, url, headers: u.auth, ...(payload !== undefined ? { payload } : {}) });

  /** An agent with one custom tool that requires approval; the model `model` asks for it once, then answers with what it read. */
  async function waitingRun(model: string, configJson: Record<string, unknown> = {}) {
    models.script(model, (call, n) => {
      if (n === 0) return toolCallsReply([{ id: 'call_1', name: 'pay', arguments: { amount: 5 } }]);
      return textReply(`read: ${call.body.messages.at(-1)!.content}`);
    });
    const agent = await api('POST', '/api/agents', { name: 'payer', configJson: { model, ...configJson } });
    assert.equal(agent.statusCode, 201, agent.body);
    const agentId = agent.json().id as string;
    const parameters = { type: 'object', properties: { amount: { type: 'number', maximum: 100 } }, required: ['amount'], additionalProperties: false };
    const tool = await api('POST', `/api/agents/${agentId}/tools`, {
      type: 'custom', name: 'pay', requiresApproval: true, configJson: { endpoint: `${service.url}/pay/${model}`, method: 'POST', bodyTemplate: '{{input}}', parameters },
    });
    assert.equal(tool.statusCode, 201, tool.body);
    assert.equal(tool.json().requiresApproval, true);
    const started = await api('POST', `/api/agents/${agentId}/runs`, { input: 'pay' });
    assert.equal(started.statusCode, 202, started.body);
    const runId = started.json().id as string;
    await waitFor(`run ${runId} to wait`, async () => (await api('GET', `/api/runs/${runId}`)).json().status === 'waiting', 30_000);
    const approvals = (await api('GET', `/api/runs/${runId}/approvals`)).json();
    assert.equal(approvals.length, 1);
    return { runId, agentId, toolId: tool.json().id as string, approval: approvals[0] };
  }

  const finished = (runId: string) =>
    waitFor(`run ${runId} to end`, async () => {
      const r = (await api('GET', `/api/runs/${runId}`)).json();
      return (r.status === 'succeeded' || r.status === 'failed') && r;
    }, 30_000);

  const received = (model: string) => service.requests.filter((r) => r.url === `/pay/${model}`);

  it('waits for a decision, then calls the tool once with the edited arguments; a second decision is a 409', async () => {
    const { runId, toolId, approval } = await waitingRun('m-approve', { approvalTimeout: '1h' });
    assert.equal(approval.status, 'pending');
    assert.equal(approval.toolId, toolId);
    assert.deepEqual(approval.arguments, { amount: 5 });
    assert.equal(received('m-approve').length, 0, 'no call before the decision');
    const steps = (await api('GET', `/api/runs/${runId}/steps`)).json();
    assert.equal(steps[1].type, 'approval');
    assert.equal(steps[1].approvalId, approval.id);
    const { rows: waiting } = await h.db.query(`SELECT data FROM events WHERE type = 'run.waiting' AND data ->> 'runId' = $1`, [runId]);
    assert.equal(waiting[0].data.approvalId, approval.id);
    assert.ok(new Date(waiting[0].data.expiresAt).getTime() - Date.now() > 30 * 60_000, 'configJson.approvalTimeout overrides APPROVAL_TIMEOUT');

    const bad = await api('POST', `/api/approvals/${approval.id}/decision`, { decision: 'approve', arguments: { amount: 500 } });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.match(bad.json().message, /arguments.*amount/);
    assert.equal((await api('GET', `/api/approvals/${approval.id}`)).json().status, 'pending', 'nothing written');

    const ok = await api('POST', `/api/approvals/${approval.id}/decision`, { decision: 'approve', arguments: { amount: 7 } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().status, 'approved');
    assert.equal(ok.json().decidedBy, user.id);
    const again = await api('POST', `/api/approvals/${approval.id}/decision`, { decision: 'reject' });
    assert.equal(again.statusCode, 409);
    assert.match(again.json().message, /already decided: approved/);

    const done = await finished(runId);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    const calls = received('m-approve');
    assert.equal(calls.length, 1, 'the tool is called once');
    assert.deepEqual(JSON.parse(calls[0]!.body), { amount: 7 }, 'with the edited arguments');
    assert.equal(models.callsFor('m-approve').length, 2, 'the first model step is not made again');
    const { rows: decided } = await h.db.query(`SELECT data FROM events WHERE type = 'approval.decided' AND data ->> 'approvalId' = $1`, [approval.id]);
    assert.equal(decided[0].data.decision, 'approve');
    const { rows: audit } = await h.db.query(`SELECT 1 FROM audit_log WHERE action = 'approval.decided' AND resource_id = $1`, [approval.id]);
    assert.equal(audit.length, 1, 'audited');
  });

  it('a rejection reaches the model as the tool result, and the tool is never called', async () => {
    const { runId, approval } = await waitingRun('m-reject', { approvalTimeout: '1h' });
    const res = await api('POST', `/api/approvals/${approval.id}/decision`, { decision: 'reject', comment: 'too much' });
    assert.equal(res.statusCode, 200, res.body);
    const done = await finished(runId);
    assert.equal(done.status, 'succeeded');
    assert.equal(received('m-reject').length, 0);
    const last = models.callsFor('m-reject')[1]!.body.messages.at(-1)!;
    assert.equal(last.role, 'tool');
    assert.deepEqual(JSON.parse(last.content as string), { rejected: true, comment: 'too much' });
  });

  it('expires after APPROVAL_TIMEOUT, as a rejection; a decision after that is a 409', async () => {
    const { runId, approval } = await waitingRun('m-expire');
    const done = await finished(runId);
    assert.equal(done.status, 'succeeded');
    assert.equal((await api('GET', `/api/approvals/${approval.id}`)).json().status, 'expired');
    const late = await api('POST', `/api/approvals/${approval.id}/decision`, { decision: 'approve' });
    assert.equal(late.statusCode, 409);
    assert.match(late.json().message, /expired/);
    const last = models.callsFor('m-expire')[1]!.body.messages.at(-1)!;
    assert.equal(JSON.parse(last.content as string).rejected, true);
    assert.equal(received('m-expire').length, 0);
  });

  it('cancelling a waiting run cancels its approval', async () => {
    const { runId, approval } = await waitingRun('m-cancel', { approvalTimeout: '1h' });
    const res = await api('POST', `/api/runs/${runId}/cancel`);
    assert.equal(res.statusCode, 202, res.body);
    const done = await finished(runId);
    assert.equal(done.status, 'failed');
    assert.equal((await api('GET', `/api/approvals/${approval.id}`)).json().status, 'cancelled');
    const late = await api('POST', `/api/approvals/${approval.id}/decision`, { decision: 'approve' });
    assert.equal(late.statusCode, 409);
    assert.equal(received('m-cancel').length, 0);
  });

  it('a viewer may see an approval but not decide it (403); another account gets 404; the inbox filters by status', async () => {
    const { runId, approval } = await waitingRun('m-viewer', { approvalTimeout: '1h' });
    const viewer = await joinWorkspace(h.app, user, 'viewer');
    const seen = await h.app.inject({ method: 'GET', url: `/api/approvals/${approval.id}`, headers: viewer.headers });
    assert.equal(seen.statusCode, 200);
    const refused = await h.app.inject({ method: 'POST', url: `/api/approvals/${approval.id}/decision`, headers: viewer.headers, payload: { decision: 'approve' } });
    assert.equal(refused.statusCode, 403);
    const stranger = await registerUser(h.app);
    assert.equal((await api('GET', `/api/approvals/${approval.id}`, undefined, stranger)).statusCode, 404);
    assert.equal((await api('POST', `/api/approvals/${approval.id}/decision`, { decision: 'approve' }, stranger)).statusCode, 404);
    const pending = (await api('GET', '/api/approvals?status=pending')).json() as { id: string }[];
    assert.ok(pending.some((a) => a.id === approval.id));
    const unknown = await api('POST', `/api/approvals/${approval.id}/decision`, { decision: 'maybe' });
    assert.equal(unknown.statusCode, 400);
    assert.match(unknown.json().message, /decision/);
    await api('POST', `/api/runs/${runId}/cancel`);
  });
});
