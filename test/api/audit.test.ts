import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { suiteContext } from '../helpers/cleanup';
import { readAllPages, registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { accountIdOf, joinWorkspace } from '../helpers/workspaces';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface Entry {
  id: string;
  actorUserId: string;
  actorEmail: string;
  action: string;
  resourceType: string;
  resourceId: string;
  createdAt: string;
}

/** The audit log and what happens when team changes race with members' writes. */
describe('audit log and team concurrency', () => {
  let app: TestApp;
  let db: Db;
  const suite = suiteContext();

  before(async () => {
    ({ app, db } = await startTestApp(suite));
  });

  const call = (headers: Record<string, string>, method: Method, url: string, payload?: unknown) =>
    app.inject({ method, url, headers, payload: payload as object });
  const ok = async (headers: Record<string, string>, method: Method, url: string, payload?: unknown) => {
    const res = await call(headers, method, url, payload);
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.body ? res.json() : undefined;
  };
  const auditOf = async (owner: TestUser): Promise<Entry[]> => (await readAllPages(app, owner, '/api/account/audit?limit=200')).items as Entry[];
  const countRows = async (sql: string, params: unknown[]) => Number((await db.query(sql, params)).rows[0].count);

  it('records every write with its actor in the account acted in; owner and admins read it, newest first, paged', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    const admin = await joinWorkspace(app, owner, 'admin');
    const editor = await joinWorkspace(app, owner, 'editor', undefined, admin.headers); // invited by the admin
    const viewer = await joinWorkspace(app, owner, 'viewer');

    const agent = await ok(editor.headers, 'POST', '/api/agents', { name: 'audited' });
    await ok(editor.headers, 'PATCH', `/api/agents/${agent.id}`, { goal: 'g' });
    await ok(editor.headers, 'PUT', `/api/agents/${agent.id}/graph`, { nodes: [{ id: 'a', type: 't' }], edges: [] });
    const tool = await ok(editor.headers, 'POST', `/api/agents/${agent.id}/tools`, { type: 'coin_prices', name: 'p', configJson: { coinIds: ['bitcoin'] } });
    const trigger = await ok(admin.headers, 'POST', `/api/agents/${agent.id}/triggers`, { type: 'webhook', name: 'w' });
    await ok(admin.headers, 'POST', `/api/triggers/${trigger.id}/fire`, {});
    const run = await ok(editor.headers, 'POST', `/api/agents/${agent.id}/runs`, {});
    await ok(admin.headers, 'DELETE', `/api/tools/${tool.id}`);
    await ok(owner.auth, 'PATCH', `/api/team/${viewer.memberId}`, { permissions: { canExport: true } });

    // Refused writes write no entry: 403, 400, 404, 402.
    const before = await countRows('SELECT count(*) FROM audit_log WHERE account_id = $1', [workspace]);
    assert.equal((await call(viewer.headers, 'POST', '/api/agents', { name: 'no' })).statusCode, 403);
    assert.equal((await call(editor.headers, 'POST', '/api/agents', { name: '' })).statusCode, 400);
    assert.equal((await call(editor.headers, 'DELETE', '/api/agents/00000000-0000-4000-8000-000000000000')).statusCode, 404);
    assert.equal((await call(admin.headers, 'DELETE', '/api/team/00000000-0000-4000-8000-000000000000')).statusCode, 404);
    assert.equal((await call(admin.headers, 'PATCH', '/api/team/00000000-0000-4000-8000-000000000000', { role: 'admin' })).statusCode, 404);
    await db.query('UPDATE accounts SET balance = 0 WHERE id = $1', [workspace]);
    assert.equal((await call(editor.headers, 'POST', '/api/agents', { name: 'short' })).statusCode, 402);
    assert.equal(await countRows('SELECT count(*) FROM audit_log WHERE account_id = $1', [workspace]), before);

    const entries = await auditOf(owner);
    const summary = entries.map((e) => [e.action, e.resourceType, e.resourceId, e.actorEmail]).reverse();
    assert.deepEqual(summary, [
      ['team.invite', 'team', admin.memberId, owner.email],
      ['team.accept', 'team', admin.memberId, admin.user.email],
      ['team.invite', 'team', editor.memberId, admin.user.email],
      ['team.accept', 'team', editor.memberId, editor.user.email],
      ['team.invite', 'team', viewer.memberId, owner.email],
      ['team.accept', 'team', viewer.memberId, viewer.user.email],
      ['agent.create', 'agent', agent.id, editor.user.email],
      ['agent.update', 'agent', agent.id, editor.user.email],
      ['agent.update', 'agent', agent.id, editor.user.email],
      ['tool.create', 'tool', tool.id, editor.user.email],
      ['trigger.create', 'trigger', trigger.id, admin.user.email],
      ['trigger.fire', 'trigger', trigger.id, admin.user.email],
      ['run.create', 'run', run.id, editor.user.email],
      ['tool.delete', 'tool', tool.id, admin.user.email],
      ['team.update', 'team', viewer.memberId, owner.email],
    ]);
    const byEmail = new Map([owner, admin.user, editor.user, viewer.user].map((u) => [u.email, u.id]));
    for (const e of entries) {
      assert.equal(e.actorUserId, byEmail.get(e.actorEmail));
      assert.ok(e.createdAt.endsWith('Z'));
      assert.deepEqual(Object.keys(e).sort(), ['action', 'actorEmail', 'actorUserId', 'createdAt', 'id', 'resourceId', 'resourceType']);
    }

    // Admins read the same log; editors and viewers may not; nobody else sees it.
    assert.deepEqual((await call(admin.headers, 'GET', '/api/account/audit?limit=200')).json(), entries);
    for (const member of [editor, viewer]) {
      const res = await call(member.headers, 'GET', '/api/account/audit');
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json(), { message: 'The admin role is required to read the audit log' });
    }
    // Each account has its own log: the editor's own account has none of these.
    assert.deepEqual((await call(editor.user.auth, 'GET', '/api/account/audit')).json(), []);

    // Paged like every list.
    const paged = await readAllPages(app, owner, '/api/account/audit?limit=4');
    assert.equal(paged.pages, 4);
    assert.deepEqual(paged.ids, entries.map((e) => e.id));
  });

  it("writes the entry in the write's transaction: a member removed while their create is under way gets 404, and nothing is written", async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    const editor = await joinWorkspace(app, owner, 'editor');
    const balance = async () => Number((await db.query('SELECT balance FROM accounts WHERE id = $1', [workspace])).rows[0].balance);
    const balanceBefore = await balance();

    // Hold the workspace's balance row so that the create stops at its charge (its last statement: the
    // agent, its event and its audit entry written, the membership not yet held), while the owner removes the member.
    const blocker = await db.connect();
    let createAnswered = false;
    let create: Promise<Awaited<ReturnType<typeof call>>>;
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [workspace]);
      create = call(editor.headers, 'POST', '/api/agents', { name: 'mid-removal' }).finally(() => (createAnswered = true));
      let waiting: number;
      for (let i = 0; ; i++) {
        const { rows } = await db.query(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE accounts SET balance%'`,
        );
        if (rows.length === 1) {
          waiting = rows[0].pid;
          break;
        }
        assert.ok(i < 200, 'the create never reached its charge');
        await new Promise((r) => setTimeout(r, 25));
      }
      // The charge is the create's last statement (docs/adr/0011-account-lock-last.md): the agent, its event and
      // its audit entry are written before it waits for the account's row, and the membership is not held yet.
      const { rows: locked } = await db.query(
        `SELECT c.relname, l.mode FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE l.pid = $1 AND l.granted AND c.relkind = 'r'`,
        [waiting],
      );
      const tables = (mode: string) => locked.filter((l) => l.mode === mode).map((l) => l.relname).sort();
      assert.deepEqual(tables('RowExclusiveLock').filter((t) => t !== 'accounts' && t !== 'account_transactions'), ['agents', 'audit_log', 'events']);
      assert.ok(!tables('RowShareLock').includes('team_members'), `no membership held while waiting for the account: ${JSON.stringify(locked)}`);
      assert.equal((await call(owner.auth, 'DELETE', `/api/team/${editor.memberId}`)).statusCode, 204);
      assert.equal(createAnswered, false);
    } finally {
      await blocker.query('COMMIT');
      blocker.release();
    }
    const res = await create!;
    assert.equal(res.statusCode, 404, res.body);
    assert.deepEqual(res.json(), { message: 'Account not found' });
    assert.equal(await countRows(`SELECT count(*) FROM agents WHERE account_id = $1 AND name = 'mid-removal'`, [workspace]), 0, 'no agent');
    assert.equal(await balance(), balanceBefore, 'no charge');
    assert.equal(await countRows(`SELECT count(*) FROM account_transactions WHERE account_id = $1 AND reason = 'agent.create'`, [workspace]), 0);
    assert.equal(await countRows(`SELECT count(*) FROM events WHERE account_id = $1 AND type = 'agent.created'`, [workspace]), 0, 'no event');
    assert.deepEqual((await auditOf(owner)).map((e) => e.action).slice(0, 1), ['team.remove'], 'no agent.create entry');
  });

  it('a member removed during a burst of creates: each create is whole (agent, charge, entry) or absent', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    const editor = await joinWorkspace(app, owner, 'editor');
    const creates = Array.from({ length: 8 }, (_, i) => call(editor.headers, 'POST', '/api/agents', { name: `burst-${i}` }));
    await new Promise((r) => setTimeout(r, 15));
    const removal = call(owner.auth, 'DELETE', `/api/team/${editor.memberId}`);
    const results = await Promise.all(creates);
    assert.equal((await removal).statusCode, 204);

    const made = results.filter((r) => r.statusCode === 201).map((r) => r.json().id as string);
    for (const r of results) assert.ok([201, 404].includes(r.statusCode), `${r.statusCode} ${r.body}`);
    const agents = (await db.query(`SELECT id FROM agents WHERE account_id = $1 AND name LIKE 'burst-%'`, [workspace])).rows.map((r) => r.id);
    const charged = (await db.query(`SELECT resource_id FROM account_transactions WHERE account_id = $1 AND reason = 'agent.create'`, [workspace])).rows.map((r) => r.resource_id);
    const audited = (await auditOf(owner)).filter((e) => e.action === 'agent.create').map((e) => e.resourceId);
    assert.deepEqual([...agents].sort(), [...made].sort());
    assert.deepEqual([...charged].sort(), [...made].sort());
    assert.deepEqual([...audited].sort(), [...made].sort());
    assert.equal((await call(editor.headers, 'GET', '/api/agents')).statusCode, 404, 'removed');
  });

  it('two admins changing the same member at once: both changes apply, each audited; never a 500', async () => {
    const owner = await registerUser(app);
    const [a, b] = [await joinWorkspace(app, owner, 'admin'), await joinWorkspace(app, owner, 'admin')];
    for (let round = 0; round < 5; round++) {
      const target = await joinWorkspace(app, owner, 'editor');
      const [byA, byB] = await Promise.all([
        call(a.headers, 'PATCH', `/api/team/${target.memberId}`, { role: 'viewer' }),
        call(b.headers, 'PATCH', `/api/team/${target.memberId}`, { permissions: { canExport: false } }),
      ]);
      assert.deepEqual([byA.statusCode, byB.statusCode], [200, 200]);
      const final = (await call(owner.auth, 'GET', `/api/team/${target.memberId}`)).json();
      assert.equal(final.role, 'viewer', 'neither change lost');
      assert.deepEqual(final.customPermissions, { canExport: false });
      const updates = (await auditOf(owner)).filter((e) => e.action === 'team.update' && e.resourceId === target.memberId);
      assert.deepEqual(updates.map((e) => e.actorUserId).sort(), [a.user.id, b.user.id].sort());

      // One removes while the other updates: the update lands before the removal or finds it removed.
      const [removed, updated] = await Promise.all([
        call(a.headers, 'DELETE', `/api/team/${target.memberId}`),
        call(b.headers, 'PATCH', `/api/team/${target.memberId}`, { role: 'admin' }),
      ]);
      assert.equal(removed.statusCode, 204);
      assert.ok([200, 404].includes(updated.statusCode), updated.body);
      const history = (await call(owner.auth, 'GET', '/api/team?status=removed')).json();
      assert.ok(history.some((m: { id: string }) => m.id === target.memberId));
    }
  });

  it('two admins removing each other at once: exactly one wins, the other is refused as no longer a member', async () => {
    const owner = await registerUser(app);
    for (let round = 0; round < 5; round++) {
      const [a, b] = [await joinWorkspace(app, owner, 'admin'), await joinWorkspace(app, owner, 'admin')];
      const results = await Promise.all([call(a.headers, 'DELETE', `/api/team/${b.memberId}`), call(b.headers, 'DELETE', `/api/team/${a.memberId}`)]);
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [204, 404], results.map((r) => r.body).join(' | '));
      assert.deepEqual(results.find((r) => r.statusCode === 404)!.json(), { message: 'Account not found' });
      const statuses = (await db.query('SELECT status FROM team_members WHERE id = ANY($1::uuid[]) ORDER BY status', [[a.memberId, b.memberId]])).rows;
      assert.deepEqual(statuses.map((r) => r.status), ['active', 'removed']);
    }
  });
});
