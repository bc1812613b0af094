import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { suiteContext } from '../helpers/cleanup';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { accountIdOf, actingIn, joinWorkspace } from '../helpers/workspaces';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Team workspaces: members act in the account they joined (docs/api.md § Team and invitations). */
describe('workspaces: the account a request acts in', () => {
  let app: TestApp;
  let db: Db;
  const suite = suiteContext();

  before(async () => {
    ({ app, db } = await startTestApp(suite));
  });

  const call = (headers: Record<string, string>, method: Method, url: string, payload?: unknown) =>
    app.inject({ method, url, headers, payload: payload as object });
  const createAgent = async (headers: Record<string, string>, name = 'agent') => {
    const res = await call(headers, 'POST', '/api/agents', { name });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const balanceOf = async (accountId: string) =>
    Number((await db.query('SELECT balance FROM accounts WHERE id = $1', [accountId])).rows[0].balance);

  it('acts in the caller\'s own account without the header, and in the workspace with it; each sees only its own', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    const shared = await createAgent(owner.auth, 'shared');
    const editor = await joinWorkspace(app, owner, 'editor');
    const mine = await createAgent(editor.user.auth, 'mine');

    const own = await call(editor.user.auth, 'GET', '/api/agents');
    assert.deepEqual(own.json().map((a: { id: string }) => a.id), [mine.id]);
    const there = await call(editor.headers, 'GET', '/api/agents');
    assert.deepEqual(there.json().map((a: { id: string }) => a.id), [shared.id]);
    assert.equal((await call(editor.headers, 'GET', `/api/agents/${shared.id}`)).json().accountId, workspace);
    assert.equal((await call(editor.headers, 'GET', `/api/agents/${mine.id}`)).statusCode, 404, 'own agent is not in the workspace');
    assert.equal((await call(editor.user.auth, 'GET', `/api/agents/${shared.id}`)).statusCode, 404, 'workspace agent is not in the own account');
    // Naming one's own account is the same as no header.
    const ownId = await accountIdOf(app, editor.user);
    assert.deepEqual((await call(actingIn(editor.user, ownId), 'GET', '/api/agents')).json().map((a: { id: string }) => a.id), [mine.id]);

    const account = (await call(editor.headers, 'GET', '/api/account')).json();
    assert.deepEqual(account, { id: workspace, name: account.name, balance: await balanceOf(workspace) });
    // /api/auth/me is the user: their own account's balance, wherever they act.
    assert.equal((await call(editor.headers, 'GET', '/api/auth/me')).json().balance, await balanceOf(ownId));

    // Created in the workspace, it belongs to the workspace.
    const made = await createAgent(editor.headers, 'made there');
    assert.equal(made.accountId, workspace);
    assert.ok((await call(owner.auth, 'GET', '/api/agents')).json().some((a: { id: string }) => a.id === made.id));
  });

  it('answers 404 to anyone who may not act in the named account, whatever the route, and changes nothing', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    const agent = await createAgent(owner.auth);
    const stranger = await registerUser(app);
    const invitedOnly = await registerUser(app);
    assert.equal((await call(owner.auth, 'POST', '/api/team', { email: invitedOnly.email, role: 'admin' })).statusCode, 201);
    const cases: [TestUser, string][] = [
      [stranger, workspace], // not a member
      [invitedOnly, workspace], // invited, not accepted
      [stranger, '00000000-0000-4000-8000-000000000000'], // no such account
      [stranger, 'not-a-uuid'],
      [stranger, `${workspace} `.repeat(2)],
      [stranger, workspace.toUpperCase()],
    ];
    for (const [user, accountId] of cases) {
      for (const [method, url, body] of [
        ['GET', '/api/agents'],
        ['GET', `/api/agents/${agent.id}`],
        ['GET', '/api/account'],
        ['POST', '/api/agents', { name: 'intruder' }],
        ['DELETE', `/api/agents/${agent.id}`],
        ['GET', '/api/accounts'],
        ['GET', '/api/auth/me'],
      ] as const) {
        const res = await call(actingIn(user, accountId), method, url, body);
        assert.equal(res.statusCode, 404, `${method} ${url} as ${accountId}`);
        assert.deepEqual(res.json(), { message: 'Account not found' });
      }
    }
    assert.equal((await call(owner.auth, 'GET', '/api/agents')).json().length, 1, 'nothing created or deleted');
    // No credential still answers 401 first, header or not.
    assert.equal((await app.inject({ method: 'GET', url: '/api/agents', headers: { 'account-id': workspace } })).statusCode, 401);
  });

  it('lists the accounts a user can act in: their own first (owner), then memberships newest first, paged', async () => {
    const user = await registerUser(app);
    const ownId = await accountIdOf(app, user);
    const owners = [await registerUser(app), await registerUser(app), await registerUser(app)];
    const roles = ['viewer', 'admin', 'editor'] as const;
    const memberIds: string[] = [];
    for (const [i, owner] of owners.entries()) {
      const invited = await call(owner.auth, 'POST', '/api/team', { email: user.email, role: roles[i], permissions: i === 0 ? { canExport: true } : undefined });
      assert.equal(invited.statusCode, 201);
      memberIds.push(invited.json().id);
      assert.equal((await call(user.auth, 'POST', `/api/invitations/${invited.json().id}/accept`, { token: invited.json().inviteToken })).statusCode, 200);
    }
    const accountIds = await Promise.all(owners.map((o) => accountIdOf(app, o)));
    const listed = (await call(user.auth, 'GET', '/api/accounts')).json();
    assert.deepEqual(
      listed.map((a: { id: string; role: string }) => [a.id, a.role]),
      [[ownId, 'owner'], [accountIds[2], 'editor'], [accountIds[1], 'admin'], [accountIds[0], 'viewer']],
    );
    assert.deepEqual(listed[0].permissions, { canExport: true, canDelete: true, canManageTeam: true });
    assert.deepEqual(listed[3].permissions, { canExport: true, canDelete: false, canManageTeam: false }, 'custom permissions applied');
    assert.equal(typeof listed[1].name, 'string');
    assert.deepEqual(Object.keys(listed[0]).sort(), ['id', 'name', 'permissions', 'role']);
    // The same list whichever account the request acts in.
    assert.deepEqual((await call(actingIn(user, accountIds[0]!), 'GET', '/api/accounts')).json(), listed);

    // Paged like every list: one per page, own first.
    const seen: string[] = [];
    let url: string | undefined = '/api/accounts?limit=1';
    while (url) {
      const res = await call(user.auth, 'GET', url);
      assert.equal(res.statusCode, 200);
      seen.push(...res.json().map((a: { id: string }) => a.id));
      const link = res.headers.link as string | undefined;
      url = link ? new URL(/^<([^>]+)>/.exec(link)![1]!).pathname + new URL(/^<([^>]+)>/.exec(link)![1]!).search : undefined;
    }
    assert.deepEqual(seen, listed.map((a: { id: string }) => a.id));

    // A removed membership is gone from the list.
    assert.equal((await call(owners[1]!.auth, 'DELETE', `/api/team/${memberIds[1]}`)).statusCode, 204);
    assert.deepEqual((await call(user.auth, 'GET', '/api/accounts')).json().map((a: { id: string }) => a.id), [ownId, accountIds[2], accountIds[0]]);
  });

  it('takes a removal and a downgrade into account on the member\'s very next request', async () => {
    const owner = await registerUser(app);
    const admin = await joinWorkspace(app, owner, 'admin');
    const agent = await createAgent(admin.headers);

    // Downgrade to viewer: reads still work, writes are refused at once.
    assert.equal((await call(owner.auth, 'PATCH', `/api/team/${admin.memberId}`, { role: 'viewer' })).statusCode, 200);
    assert.equal((await call(admin.headers, 'GET', `/api/agents/${agent.id}`)).statusCode, 200);
    const refused = await call(admin.headers, 'PATCH', `/api/agents/${agent.id}`, { name: 'renamed' });
    assert.equal(refused.statusCode, 403);
    assert.match(refused.json().message, /editor or admin role is required/);
    assert.equal((await call(owner.auth, 'GET', `/api/agents/${agent.id}`)).json().name, agent.name, 'nothing changed');

    // Up again, then a custom override takes canDelete away from the role's default.
    assert.equal((await call(owner.auth, 'PATCH', `/api/team/${admin.memberId}`, { role: 'editor', permissions: { canDelete: false } })).statusCode, 200);
    assert.equal((await call(admin.headers, 'PATCH', `/api/agents/${agent.id}`, { name: 'renamed' })).statusCode, 200);
    const noDelete = await call(admin.headers, 'DELETE', `/api/agents/${agent.id}`);
    assert.equal(noDelete.statusCode, 403);
    assert.deepEqual(noDelete.json(), { message: 'canDelete is required' });

    // Removed: 404, as if the account did not exist.
    assert.equal((await call(owner.auth, 'DELETE', `/api/team/${admin.memberId}`)).statusCode, 204);
    for (const [method, url] of [['GET', `/api/agents/${agent.id}`], ['GET', '/api/account'], ['DELETE', `/api/agents/${agent.id}`]] as const) {
      const res = await call(admin.headers, method, url);
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.deepEqual(res.json(), { message: 'Account not found' });
    }
    assert.equal((await call(owner.auth, 'GET', `/api/agents/${agent.id}`)).statusCode, 200);
  });

  it('answers each of many requests arriving together by its own membership (the lookups are made as one query)', async () => {
    const owners = [await registerUser(app), await registerUser(app), await registerUser(app)];
    const accounts = await Promise.all(owners.map((o) => accountIdOf(app, o)));
    const agents = await Promise.all(owners.map((o) => createAgent(o.auth)));
    // u0: admin of account 0; u1: viewer of account 1; u2: member of none (removed from account 2).
    const u0 = await joinWorkspace(app, owners[0]!, 'admin');
    const u1 = await joinWorkspace(app, owners[1]!, 'viewer');
    const u2 = await joinWorkspace(app, owners[2]!, 'editor');
    assert.equal((await call(owners[2]!.auth, 'DELETE', `/api/team/${u2.memberId}`)).statusCode, 204);
    // What each user may do in each account: null = not a member there.
    const roles = new Map<TestUser, (string | null)[]>([[u0.user, ['admin', null, null]], [u1.user, [null, 'viewer', null]], [u2.user, [null, null, null]]]);
    const cases: [TestUser, number, Method, number][] = [];
    for (const [u, byAccount] of roles) {
      byAccount.forEach((role, a) => {
        cases.push([u, a, 'GET', role ? 200 : 404]);
        cases.push([u, a, 'PATCH', !role ? 404 : role === 'viewer' ? 403 : 200]);
      });
    }
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(
        cases.map(([u, a, method]) => call(actingIn(u, accounts[a]!), method, `/api/agents/${agents[a]!.id}`, method === 'PATCH' ? { goal: `r${round}` } : undefined)),
      );
      assert.deepEqual(results.map((r) => r.statusCode), cases.map((c) => c[3]));
    }
  });

  it('lets an API key act in any account its user may act in, through the same header', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    const shared = await createAgent(owner.auth, 'shared');
    const member = await joinWorkspace(app, owner, 'viewer');
    const created = await call(member.headers, 'POST', '/api/auth/api-keys', { name: 'ci' }); // a key is the user's, whatever the account acted in
    assert.equal(created.statusCode, 201, created.body);
    const key = { authorization: `Bearer ${created.json().key}` };

    assert.deepEqual((await call(key, 'GET', '/api/agents')).json(), [], 'own account without the header');
    assert.deepEqual((await call({ ...key, 'account-id': workspace }, 'GET', '/api/agents')).json().map((a: { id: string }) => a.id), [shared.id]);
    const write = await call({ ...key, 'account-id': workspace }, 'POST', '/api/agents', { name: 'via key' });
    assert.equal(write.statusCode, 403, 'the key has its user\'s role there: viewer');
    assert.equal((await call({ ...key, 'account-id': '00000000-0000-4000-8000-000000000000' }, 'GET', '/api/agents')).statusCode, 404);
    assert.equal((await call({ ...key, 'account-id': 'junk' }, 'GET', '/api/agents')).statusCode, 404);

    assert.equal((await call(owner.auth, 'PATCH', `/api/team/${member.memberId}`, { role: 'editor' })).statusCode, 200);
    assert.equal((await call({ ...key, 'account-id': workspace }, 'POST', '/api/agents', { name: 'via key' })).statusCode, 201, 'upgrade seen at once');
    assert.equal((await call(owner.auth, 'DELETE', `/api/team/${member.memberId}`)).statusCode, 204);
    assert.equal((await call({ ...key, 'account-id': workspace }, 'GET', '/api/agents')).statusCode, 404, 'removal seen at once');
    assert.equal((await call(key, 'GET', '/api/agents')).statusCode, 200, 'the key still works in its own account');
  });

  it('charges the account acted in, records the actor on the ledger, and refuses with 402 when the workspace is short', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    const editor = await joinWorkspace(app, owner, 'editor');
    const ownId = await accountIdOf(app, editor.user);
    const [before, ownBefore] = [await balanceOf(workspace), await balanceOf(ownId)];

    const agent = await createAgent(editor.headers);
    assert.equal(await balanceOf(workspace), before - 100);
    assert.equal(await balanceOf(ownId), ownBefore, "the member's own account is not charged");
    const ledger = (await call(owner.auth, 'GET', '/api/account/transactions')).json();
    assert.equal(ledger[0].resourceId, agent.id);
    assert.equal(ledger[0].amount, -100);
    assert.equal(ledger[0].actorUserId, editor.user.id);
    assert.equal(ledger[ledger.length - 1].reason, 'initial_grant');
    assert.equal(ledger[ledger.length - 1].actorUserId, null);
    assert.deepEqual((await call(editor.headers, 'GET', '/api/account/transactions')).json(), ledger, 'members read the same ledger');

    // Leaving template is charged to the workspace too, with the actor.
    const template = (await call(editor.headers, 'POST', '/api/agents', { name: 't', status: 'template' })).json();
    assert.equal((await call(editor.headers, 'PATCH', `/api/agents/${template.id}`, { status: 'draft' })).statusCode, 200);
    const [fromTemplate] = (await call(owner.auth, 'GET', '/api/account/transactions')).json();
    assert.deepEqual([fromTemplate.reason, fromTemplate.actorUserId, fromTemplate.resourceId], ['agent.from_template', editor.user.id, template.id]);

    // The workspace runs dry: 402 though the member's own balance is full; nothing written.
    await db.query('UPDATE accounts SET balance = 50 WHERE id = $1', [workspace]);
    const agentsBefore = (await call(owner.auth, 'GET', '/api/agents')).json().length;
    const short = await call(editor.headers, 'POST', '/api/agents', { name: 'too dear' });
    assert.equal(short.statusCode, 402);
    assert.match(short.json().message, /balance is 50/);
    assert.equal((await call(owner.auth, 'GET', '/api/agents')).json().length, agentsBefore);
    assert.equal(await balanceOf(ownId), ownBefore);
  });

  it('keeps the owner out of the team: not invitable, so never removed or downgraded; a member cannot take the account', async () => {
    const owner = await registerUser(app);
    const admin = await joinWorkspace(app, owner, 'admin');
    const res = await call(admin.headers, 'POST', '/api/team', { email: owner.email.toUpperCase(), role: 'viewer' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: "body.email: is the account owner's own address" });
    // The owner has no membership to change: the team lists members only, and the owner keeps every right.
    const team = (await call(admin.headers, 'GET', '/api/team')).json();
    assert.ok(team.every((m: { email: string }) => m.email.toLowerCase() !== owner.email.toLowerCase()));
    const accounts = (await call(owner.auth, 'GET', '/api/accounts')).json();
    assert.deepEqual([accounts[0].role, accounts[0].permissions], ['owner', { canExport: true, canDelete: true, canManageTeam: true }]);
    // An admin removing every member leaves the owner untouched.
    assert.equal((await call(admin.headers, 'DELETE', `/api/team/${admin.memberId}`)).statusCode, 204);
    assert.equal((await call(admin.headers, 'GET', '/api/agents')).statusCode, 404, 'the admin removed themselves');
    assert.equal((await call(owner.auth, 'POST', '/api/agents', { name: 'still mine' })).statusCode, 201);
  });

  it('never lets one idempotency key replay across accounts, and audits a replayed create once', async () => {
    const owner = await registerUser(app);
    const editor = await joinWorkspace(app, owner, 'editor');
    const key = { 'idempotency-key': 'same-key' };
    const first = await call({ ...editor.headers, ...key }, 'POST', '/api/agents', { name: 'x' });
    assert.equal(first.statusCode, 201);
    const elsewhere = await call({ ...editor.user.auth, ...key }, 'POST', '/api/agents', { name: 'x' });
    assert.equal(elsewhere.statusCode, 422, 'the same key and body in another account is another request');
    const replay = await call({ ...editor.headers, ...key }, 'POST', '/api/agents', { name: 'x' });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().id, first.json().id);
    const audited = (await call(owner.auth, 'GET', '/api/account/audit')).json().filter((e: { action: string }) => e.action === 'agent.create');
    assert.deepEqual(audited.map((e: { resourceId: string }) => e.resourceId), [first.json().id], 'a replay is not a second write');
  });
});
