import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { effectivePermissions, mergeOverrides, ROLE_PERMISSIONS } from '../../api/services/team-permissions';
import { api, type ApiResponse } from '../helpers/api';
import { readAllPages, registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import type { TestDatabase } from '../helpers/database';
import { accountIdOf, joinWorkspace, type Member } from '../helpers/workspaces';

const uniqueEmail = (name: string) => `${name}-${randomBytes(4).toString('hex')}@example.com`;

describe('team permissions (pure)', () => {
  it('applies custom booleans over the role defaults', () => {
    assert.deepEqual(effectivePermissions('admin', {}), { canExport: true, canDelete: true, canManageTeam: true });
    assert.deepEqual(effectivePermissions('editor', {}), { canExport: true, canDelete: true, canManageTeam: false });
    assert.deepEqual(effectivePermissions('viewer', {}), { canExport: false, canDelete: false, canManageTeam: false });
    assert.deepEqual(effectivePermissions('viewer', { canManageTeam: true }), { canExport: false, canDelete: false, canManageTeam: true });
    assert.deepEqual(effectivePermissions('admin', { canDelete: false }), { canExport: true, canDelete: false, canManageTeam: true });
    assert.deepEqual(ROLE_PERMISSIONS.viewer, { canExport: false, canDelete: false, canManageTeam: false }, 'defaults not mutated');
  });

  it('merges overrides: boolean sets, null removes, absent keeps', () => {
    assert.deepEqual(mergeOverrides({ canExport: true, canDelete: false }, { canDelete: null, canManageTeam: true }), {
      canExport: true,
      canManageTeam: true,
    });
    assert.deepEqual(mergeOverrides({ canExport: true }, {}), { canExport: true });
  });
});

describe('team and invitations (docs/api.md § Team and invitations)', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  let database: TestDatabase;

  before(async () => {
    ({ app, db, database } = await startTestApp(suite));
  });

  type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  const call = (user: TestUser, method: Method, url: string, payload?: unknown) => api(app, user).request(method, url, payload);
  /** Each invitation's token, shown once in the invite's 201. */
  const inviteTokens = new Map<string, string>();
  /** The invited member as every later read shows it (the token aside, kept in inviteTokens). */
  const invite = async (user: TestUser, body: unknown) => {
    const res = await api(app, user).post('/api/team', body);
    assert.equal(res.statusCode, 201, res.body);
    const { inviteToken, ...member } = res.json();
    assert.match(inviteToken, /^inv_[A-Za-z0-9_-]{43}$/);
    inviteTokens.set(member.id, inviteToken);
    return member;
  };
  const accept = (user: TestUser, id: string, token = inviteTokens.get(id) ?? 'inv_unknown') =>
    call(user, 'POST', `/api/invitations/${id}/accept`, { token });
  const ids = (list: { id: string }[]) => list.map((m) => m.id);

  const readAll = async (user: TestUser, first: string) => {
    const { items, pages } = await readAllPages(app, user, first);
    return { seen: items, pages };
  };

  it('invites each role with its default permissions', async () => {
    const owner = await registerUser(app);
    for (const role of ['admin', 'editor', 'viewer'] as const) {
      const email = uniqueEmail(role);
      const member = await invite(owner, { email, role });
      assert.match(member.id, /^[0-9a-f-]{36}$/);
      assert.equal(member.email, email);
      assert.equal(member.role, role);
      assert.equal(member.status, 'invited');
      assert.deepEqual(member.permissions, ROLE_PERMISSIONS[role]);
      assert.deepEqual(member.customPermissions, {});
      assert.equal(member.userId, null);
      assert.equal(member.acceptedAt, null);
      assert.equal(member.removedAt, null);
      for (const f of ['invitedAt', 'expiresAt', 'createdAt', 'updatedAt']) assert.ok(member[f].endsWith('Z') && !Number.isNaN(Date.parse(member[f])), f);
      assert.equal(Date.parse(member.expiresAt) - Date.parse(member.invitedAt), 7 * 86_400_000, 'open for INVITATION_TTL (default 7d)');
      const read = (await api(app, owner).get(`/api/team/${member.id}`)).json();
      assert.deepEqual(read, member);
    }
    const expected = { admin: [true, true, true], editor: [true, true, false], viewer: [false, false, false] };
    for (const [role, [canExport, canDelete, canManageTeam]] of Object.entries(expected)) {
      assert.deepEqual(ROLE_PERMISSIONS[role as keyof typeof ROLE_PERMISSIONS], { canExport, canDelete, canManageTeam }, role);
    }
  });

  it('shows overrides, merges them, removes one with null, and keeps them across a role change', async () => {
    const owner = await registerUser(app);
    const member = await invite(owner, { email: uniqueEmail('o'), role: 'viewer', permissions: { canExport: true } });
    assert.deepEqual(member.permissions, { canExport: true, canDelete: false, canManageTeam: false });
    assert.deepEqual(member.customPermissions, { canExport: true });

    const merged = (await api(app, owner).patch(`/api/team/${member.id}`, { permissions: { canManageTeam: true } })).json();
    assert.deepEqual(merged.customPermissions, { canExport: true, canManageTeam: true });
    assert.deepEqual(merged.permissions, { canExport: true, canDelete: false, canManageTeam: true });

    const removed = (await api(app, owner).put(`/api/team/${member.id}`, { permissions: { canExport: null } })).json();
    assert.deepEqual(removed.customPermissions, { canManageTeam: true });
    assert.deepEqual(removed.permissions, { canExport: false, canDelete: false, canManageTeam: true }, 'role default applies again');

    const overriddenOff = (await api(app, owner).patch(`/api/team/${member.id}`, { permissions: { canManageTeam: false, canDelete: false } })).json();
    const promoted = (await api(app, owner).patch(`/api/team/${member.id}`, { role: 'admin' })).json();
    assert.equal(promoted.role, 'admin');
    assert.deepEqual(promoted.customPermissions, overriddenOff.customPermissions);
    assert.deepEqual(promoted.customPermissions, { canManageTeam: false, canDelete: false });
    assert.deepEqual(promoted.permissions, { canExport: true, canDelete: false, canManageTeam: false }, 'overrides beat the new role');

    // The column holds the overrides only, never the effective set.
    const { rows } = await db.query('SELECT permissions FROM team_members WHERE id = $1', [member.id]);
    assert.deepEqual(rows[0].permissions, { canManageTeam: false, canDelete: false });
  });

  it('updates partially with PUT and PATCH; an empty body changes nothing', async () => {
    const owner = await registerUser(app);
    const member = await invite(owner, { email: uniqueEmail('p'), role: 'editor', permissions: { canDelete: false } });
    const put = await api(app, owner).put(`/api/team/${member.id}`, { role: 'viewer' });
    assert.equal(put.statusCode, 200);
    assert.equal(put.json().role, 'viewer');
    assert.deepEqual(put.json().customPermissions, { canDelete: false });
    assert.equal(put.json().email, member.email);
    assert.ok(Date.parse(put.json().updatedAt) >= Date.parse(member.updatedAt));
    const patch = await api(app, owner).patch(`/api/team/${member.id}`, { permissions: { canExport: true } });
    assert.equal(patch.statusCode, 200);
    assert.equal(patch.json().role, 'viewer', 'role kept');
    assert.deepEqual(patch.json().customPermissions, { canDelete: false, canExport: true });
    for (const method of ['PUT', 'PATCH'] as const) {
      const same = await api(app, owner).request(method, `/api/team/${member.id}`, {});
      assert.equal(same.statusCode, 200, method);
      assert.deepEqual(same.json(), patch.json(), method);
    }
  });

  it('validates bodies with a message naming the field', async () => {
    const owner = await registerUser(app);
    const cases: [unknown, RegExp][] = [
      [{ role: 'viewer' }, /^body\.email: is required/],
      [{ email: 'not-an-email', role: 'viewer' }, /^body\.email: /],
      [{ email: `${'x'.repeat(310)}@example.com`, role: 'viewer' }, /^body\.email: /],
      [{ email: `${'x'.repeat(65)}@example.com`, role: 'viewer' }, /^body\.email: .*64 characters/],
      [{ email: `${'x'.repeat(64)}@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(60)}.com`, role: 'viewer' }, /^body\.email: .*254 characters/],
      [{ email: uniqueEmail('v') }, /^body\.role: is required/],
      [{ email: uniqueEmail('v'), role: 'owner' }, /^body\.role: /],
      [{ email: uniqueEmail('v'), role: 'viewer', permissions: { canFly: true } }, /^body\.permissions: .*canFly/],
      [{ email: uniqueEmail('v'), role: 'viewer', permissions: { canExport: 'yes' } }, /^body\.permissions\.canExport: /],
      [{ email: uniqueEmail('v'), role: 'viewer', permissions: { canExport: null } }, /^body\.permissions\.canExport: /],
      [{ email: uniqueEmail('v'), role: 'viewer', permissions: [] }, /^body\.permissions: /],
      [{ email: uniqueEmail('v'), role: 'viewer', status: 'active' }, /status/],
    ];
    for (const [payload, message] of cases) {
      const res = await api(app, owner).post('/api/team', payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 80));
      assert.deepEqual(Object.keys(res.json()), ['message']);
      assert.match(res.json().message, message);
    }
    const member = await invite(owner, { email: `${'v'.repeat(64)}@example.com`, role: 'viewer' }); // the longest local part allowed
    const updates: [unknown, RegExp][] = [
      [{ role: 'owner' }, /^body\.role: /],
      [{ permissions: { canFly: true } }, /^body\.permissions: .*canFly/],
      [{ permissions: { canDelete: 1 } }, /^body\.permissions\.canDelete: /],
      [{ email: 'new@example.com' }, /email/],
    ];
    for (const method of ['PUT', 'PATCH'] as const) {
      for (const [payload, message] of updates) {
        const res = await api(app, owner).request(method, `/api/team/${member.id}`, payload);
        assert.equal(res.statusCode, 400, `${method} ${JSON.stringify(payload)}`);
        assert.match(res.json().message, message);
      }
    }
    assert.deepEqual((await api(app, owner).get(`/api/team/${member.id}`)).json(), member, 'unchanged after refusals');
    const badStatus = await api(app, owner).get('/api/team?status=gone');
    assert.equal(badStatus.statusCode, 400);
    assert.match(badStatus.json().message, /querystring\.status/);
    assert.deepEqual(ids((await api(app, owner).get('/api/team')).json()), [member.id], 'refused invites wrote nothing');
  });

  it('refuses a duplicate invite case-insensitively (409), but another account may invite the same email', async () => {
    const owner = await registerUser(app);
    const email = uniqueEmail('Dup');
    await invite(owner, { email, role: 'viewer' });
    for (const variant of [email, email.toUpperCase(), email.toLowerCase()]) {
      const res = await api(app, owner).post('/api/team', { email: variant, role: 'admin' });
      assert.equal(res.statusCode, 409, variant);
      assert.equal(res.json().message, `body.email: ${variant} is already a member or invited`);
    }
    assert.equal((await api(app, owner).get('/api/team')).json().length, 1);

    // Concurrent invites of one address: the unique index decides, and the loser is a 409, never a 500.
    const raced = uniqueEmail('race-invite');
    const results = await Promise.all([raced, raced.toUpperCase(), raced].map((e) => api(app, owner).post('/api/team', { email: e, role: 'viewer' })));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409, 409]);
    assert.equal((await api(app, owner).get('/api/team')).json().length, 2);

    const other = await registerUser(app);
    assert.equal((await api(app, other).post('/api/team', { email, role: 'viewer' })).statusCode, 201);
  });

  it("refuses inviting the owner's own address (400), in any case", async () => {
    const owner = await registerUser(app);
    for (const email of [owner.email, owner.email.toUpperCase()]) {
      const res = await api(app, owner).post('/api/team', { email, role: 'admin' });
      assert.equal(res.statusCode, 400, email);
      assert.equal(res.json().message, "body.email: is the account owner's own address");
    }
    assert.deepEqual((await api(app, owner).get('/api/team')).json(), []);
  });

  it('shows an invitation only to its addressee, who accepts it once', async () => {
    const owner = await registerUser(app);
    const inviteeEmail = uniqueEmail('invitee');
    // Invited in another case than the one the invitee registers with.
    const member = await invite(owner, { email: inviteeEmail.toUpperCase(), role: 'editor', permissions: { canManageTeam: true } });
    const invitee = await registerUser(app, inviteeEmail);
    const third = await registerUser(app);

    const listed = await api(app, invitee).get('/api/invitations');
    assert.equal(listed.statusCode, 200);
    const account = (await api(app, owner).get('/api/account')).json();
    assert.deepEqual(listed.json(), [
      {
        id: member.id,
        accountId: account.id,
        accountName: account.name,
        email: member.email,
        role: 'editor',
        permissions: { canExport: true, canDelete: true, canManageTeam: true },
        invitedAt: member.invitedAt,
        expiresAt: member.expiresAt,
      },
    ]);
    assert.deepEqual((await api(app, third).get('/api/invitations')).json(), []);
    assert.deepEqual((await api(app, owner).get('/api/invitations')).json(), []);

    for (const stranger of [third, owner]) {
      const res = await accept(stranger, member.id);
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().message, 'Invitation not found');
    }
    assert.equal((await accept(invitee, '00000000-0000-4000-8000-000000000000')).statusCode, 404);
    assert.equal((await accept(invitee, 'not-a-uuid')).statusCode, 404);
    assert.equal((await call(owner, 'GET', `/api/team/${member.id}`)).json().status, 'invited', 'strangers changed nothing');

    const accepted = await accept(invitee, member.id);
    assert.equal(accepted.statusCode, 200, accepted.body);
    const active = accepted.json();
    assert.equal(active.id, member.id);
    assert.equal(active.status, 'active');
    assert.equal(active.userId, invitee.id);
    assert.ok(active.acceptedAt && Date.parse(active.acceptedAt) >= Date.parse(member.invitedAt));
    assert.deepEqual(active.customPermissions, { canManageTeam: true });
    assert.equal(active.expiresAt, null, 'an accepted invitation no longer expires');
    assert.deepEqual((await api(app, owner).get(`/api/team/${member.id}`)).json(), active);
    assert.deepEqual((await api(app, invitee).get('/api/invitations')).json(), [], 'no longer open');

    const again = await accept(invitee, member.id);
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().message, 'Invitation is no longer open');
    assert.equal((await accept(third, member.id)).statusCode, 404, 'others still see nothing');

    // An active member is still a member: inviting the address again conflicts.
    assert.equal((await api(app, owner).post('/api/team', { email: inviteeEmail, role: 'viewer' })).statusCode, 409);
  });

  it('accepts only with the invitation\'s token, shown once and stored hashed: registering the invited address is not enough', async () => {
    const owner = await registerUser(app);
    const email = uniqueEmail('token');
    const res = await call(owner, 'POST', '/api/team', { email, role: 'admin' });
    assert.equal(res.statusCode, 201);
    const { inviteToken, ...member } = res.json();
    assert.match(inviteToken, /^inv_/);
    // Never shown again: not in reads, lists or the addressee's invitations.
    const owners = [(await call(owner, 'GET', `/api/team/${member.id}`)).body, (await call(owner, 'GET', '/api/team')).body];
    const { rows } = await db.query('SELECT invite_token_hash FROM team_members WHERE id = $1', [member.id]);
    assert.equal(rows[0].invite_token_hash, createHash('sha256').update(inviteToken).digest('hex'), 'stored as its SHA-256');
    const squatter = await registerUser(app, email); // whoever registers the address first
    const readsOfSquatter = (await call(squatter, 'GET', '/api/invitations')).body;
    for (const body of [...owners, readsOfSquatter]) assert.ok(!body.includes(inviteToken), 'token shown again');

    for (const token of ['inv_wrong', inviteToken.slice(0, -1), inviteToken.toUpperCase(), `${inviteToken} `]) {
      const refused = await call(squatter, 'POST', `/api/invitations/${member.id}/accept`, { token });
      assert.equal(refused.statusCode, 404, token);
      assert.deepEqual(refused.json(), { message: 'Invitation not found' });
    }
    for (const [body, message] of [[{}, /^body\.token: is required/], [{ token: '' }, /^body\.token: /], [{ token: 7 }, /^body\.token: /]] as const) {
      const refused = await call(squatter, 'POST', `/api/invitations/${member.id}/accept`, body);
      assert.equal(refused.statusCode, 400, JSON.stringify(body));
      assert.match(refused.json().message, message);
    }
    // The right token in the hands of someone with another email is no good either.
    const other = await registerUser(app);
    assert.equal((await call(other, 'POST', `/api/invitations/${member.id}/accept`, { token: inviteToken })).statusCode, 404);
    assert.equal((await call(owner, 'GET', `/api/team/${member.id}`)).json().status, 'invited', 'nothing accepted');
    assert.deepEqual((await call(squatter, 'GET', '/api/accounts')).json().map((a: { role: string }) => a.role), ['owner'], 'no access gained');

    const accepted = await call(squatter, 'POST', `/api/invitations/${member.id}/accept`, { token: inviteToken });
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal(accepted.json().status, 'active');
    // No longer open: 409 with the token, still 404 without it.
    assert.equal((await call(squatter, 'POST', `/api/invitations/${member.id}/accept`, { token: inviteToken })).statusCode, 409);
    assert.equal((await call(squatter, 'POST', `/api/invitations/${member.id}/accept`, { token: 'inv_wrong' })).statusCode, 404);
  });

  it('lets exactly one of two concurrent accepts succeed', async () => {
    const owner = await registerUser(app);
    const email = uniqueEmail('race');
    const member = await invite(owner, { email, role: 'viewer' });
    const invitee = await registerUser(app, email);
    const results = await Promise.all(
      Array.from({ length: 2 }, () => accept(invitee, member.id)),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 409]);
    const { rows } = await db.query('SELECT status, user_id FROM team_members WHERE id = $1', [member.id]);
    assert.deepEqual(rows, [{ status: 'active', user_id: invitee.id }]);
  });

  it('lists invitations from several accounts with pagination', async () => {
    const email = uniqueEmail('popular');
    const inviters = [await registerUser(app), await registerUser(app), await registerUser(app)];
    const created: string[] = [];
    for (const inviter of inviters) created.push((await invite(inviter, { email, role: 'viewer' })).id);
    const invitee = await registerUser(app, email);
    const { seen, pages } = await readAll(invitee, '/api/invitations?limit=2');
    assert.equal(pages, 2);
    assert.deepEqual(ids(seen), [...created].reverse());
  });

  it('removes a member as history: 204, then 404, listed only with status=removed, and re-invitable', async () => {
    const owner = await registerUser(app);
    const email = uniqueEmail('leaver');
    const member = await invite(owner, { email, role: 'editor' });
    const keep = await invite(owner, { email: uniqueEmail('stayer'), role: 'viewer' });

    const del = await api(app, owner).delete(`/api/team/${member.id}`);
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    for (const [method, body] of [['GET'], ['PUT', { role: 'admin' }], ['PATCH', { role: 'admin' }], ['DELETE']] as const) {
      const res = await api(app, owner).request(method, `/api/team/${member.id}`, body);
      assert.equal(res.statusCode, 404, method);
      assert.equal(res.json().message, 'Team member not found');
    }
    assert.deepEqual(ids((await api(app, owner).get('/api/team')).json()), [keep.id]);
    const history = (await api(app, owner).get('/api/team?status=removed')).json();
    assert.deepEqual(ids(history), [member.id]);
    assert.equal(history[0].status, 'removed');
    assert.ok(history[0].removedAt && !Number.isNaN(Date.parse(history[0].removedAt)));
    assert.equal(history[0].role, 'editor', 'kept as it was');
    assert.deepEqual(ids((await api(app, owner).get('/api/team?status=invited')).json()), [keep.id]);
    assert.deepEqual((await api(app, owner).get('/api/team?status=active')).json(), []);

    // A withdrawn invitation is no longer open: 409 to its addressee, still 404 to anyone else.
    const invitee = await registerUser(app, email);
    assert.deepEqual((await call(invitee, 'GET', '/api/invitations')).json(), []);
    assert.equal((await accept(invitee, member.id)).statusCode, 409);
    assert.equal((await accept(await registerUser(app), member.id)).statusCode, 404);

    const reinvited = await api(app, owner).post('/api/team', { email: email.toUpperCase(), role: 'viewer' });
    assert.equal(reinvited.statusCode, 201);
    assert.notEqual(reinvited.json().id, member.id);
    assert.deepEqual(ids((await api(app, invitee).get('/api/invitations')).json()), [reinvited.json().id]);
    assert.deepEqual(ids((await api(app, owner).get('/api/team?status=removed')).json()), [member.id], 'history kept');
  });

  it('removes an active member too', async () => {
    const owner = await registerUser(app);
    const email = uniqueEmail('active');
    const member = await invite(owner, { email, role: 'viewer' });
    const invitee = await registerUser(app, email);
    assert.equal((await accept(invitee, member.id)).statusCode, 200);
    assert.equal((await call(owner, 'DELETE', `/api/team/${member.id}`)).statusCode, 204);
    const [removed] = (await call(owner, 'GET', '/api/team?status=removed')).json();
    assert.equal(removed.status, 'removed');
    assert.equal(removed.userId, invitee.id);
    assert.ok(removed.acceptedAt);
  });

  it('pages newest first with a Link header, keeping the status filter', async () => {
    const owner = await registerUser(app);
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push((await invite(owner, { email: uniqueEmail(`page${i}`), role: 'viewer' })).id);
    const all = await readAll(owner, '/api/team?limit=3');
    assert.equal(all.pages, 3);
    assert.deepEqual(ids(all.seen), [...created].reverse());

    for (const id of created.slice(0, 5)) assert.equal((await api(app, owner).delete(`/api/team/${id}`)).statusCode, 204);
    const removed = await readAll(owner, '/api/team?status=removed&limit=2');
    assert.equal(removed.pages, 3);
    assert.deepEqual(ids(removed.seen), created.slice(0, 5).reverse());
    const first = await api(app, owner).get('/api/team?status=removed&limit=2');
    assert.match(first.headers.link as string, /status=removed/);
  });

  it('shows one account nothing of another: 404 on every item route, absent from lists', async () => {
    const owner = await registerUser(app);
    const stranger = await registerUser(app);
    const member = await invite(owner, { email: uniqueEmail('private'), role: 'viewer' });
    for (const [method, body] of [['GET'], ['PUT', { role: 'admin' }], ['PATCH', { permissions: { canExport: true } }], ['DELETE']] as const) {
      const res = await api(app, stranger).request(method, `/api/team/${member.id}`, body);
      assert.equal(res.statusCode, 404, method);
      assert.equal(res.json().message, 'Team member not found');
    }
    assert.deepEqual((await api(app, stranger).get('/api/team')).json(), []);
    assert.deepEqual((await api(app, stranger).get('/api/team?status=removed')).json(), []);
    assert.deepEqual((await api(app, owner).get(`/api/team/${member.id}`)).json(), member, 'untouched');
    assert.equal((await api(app).get('/api/team')).statusCode, 401);
    assert.equal((await api(app).get('/api/invitations')).statusCode, 401);
  });

  // ---- No one grants more than they hold ----

  /** A request made with a member's headers (Authorization plus Account-Id of the workspace). */
  const as = (headers: Record<string, string>, method: Method, url: string, payload?: unknown) =>
    api(app).request(method, url, payload, headers);
  /** Every team row of the account and its audit entries: what a refused write must leave as it was. */
  const teamState = async (accountId: string) => ({
    members: (await db.query('SELECT id, role, permissions, status, updated_at FROM team_members WHERE account_id = $1 ORDER BY id', [accountId])).rows,
    audit: Number((await db.query('SELECT count(*) FROM audit_log WHERE account_id = $1', [accountId])).rows[0].count),
  });
  const assertRefused = (res: ApiResponse, message: RegExp | string, what: string) => {
    assert.equal(res.statusCode, 403, `${what}: ${res.statusCode} ${res.body}`);
    assert.deepEqual(Object.keys(res.json()), ['message'], what);
    if (typeof message === 'string') assert.equal(res.json().message, message, what);
    else assert.match(res.json().message, message, what);
  };
  /** Runs `refused`, asserting it answers 403 with `message` and writes nothing (no row changed, no audit entry). */
  const refusedUnchanged = async (accountId: string, what: string, message: RegExp | string, refused: () => Promise<ApiResponse>) => {
    const before = await teamState(accountId);
    assertRefused(await refused(), message, what);
    assert.deepEqual(await teamState(accountId), before, `${what}: refused, yet something was written`);
  };
  const OWN_ROW = /^A member cannot change their own membership/;

  it('caps an invite at the inviter\'s own role and permissions; the owner may grant anything', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    // A viewer granted only canManageTeam: may invite viewers, and grant canManageTeam, nothing more.
    const viewer = await joinWorkspace(app, owner, 'viewer', { canManageTeam: true });
    await refusedUnchanged(workspace, 'viewer invites an admin', 'Cannot grant the admin role: a member grants at most their own role (viewer)', () =>
      as(viewer.headers, 'POST', '/api/team', { email: uniqueEmail('puppet'), role: 'admin' }),
    );
    await refusedUnchanged(workspace, 'viewer invites an editor', /^Cannot grant the editor role/, () =>
      as(viewer.headers, 'POST', '/api/team', { email: uniqueEmail('puppet'), role: 'editor' }),
    );
    for (const key of ['canExport', 'canDelete'] as const) {
      await refusedUnchanged(workspace, `viewer grants ${key}`, `Cannot grant ${key}: a member grants only permissions they hold`, () =>
        as(viewer.headers, 'POST', '/api/team', { email: uniqueEmail('puppet'), role: 'viewer', permissions: { [key]: true } }),
      );
    }
    const peer = await as(viewer.headers, 'POST', '/api/team', { email: uniqueEmail('peer'), role: 'viewer', permissions: { canManageTeam: true } });
    assert.equal(peer.statusCode, 201, peer.body);
    assert.deepEqual(peer.json().permissions, { canExport: false, canDelete: false, canManageTeam: true });

    // An editor with canManageTeam but not canDelete: an editor's defaults include canDelete, so inviting
    // an editor needs the override that takes it away.
    const editor = await joinWorkspace(app, owner, 'editor', { canManageTeam: true, canDelete: false });
    await refusedUnchanged(workspace, 'editor invites an admin', /^Cannot grant the admin role: .*\(editor\)$/, () =>
      as(editor.headers, 'POST', '/api/team', { email: uniqueEmail('puppet'), role: 'admin' }),
    );
    await refusedUnchanged(workspace, 'editor invites an editor with the default canDelete', /^Cannot grant canDelete/, () =>
      as(editor.headers, 'POST', '/api/team', { email: uniqueEmail('puppet'), role: 'editor' }),
    );
    const capped = await as(editor.headers, 'POST', '/api/team', { email: uniqueEmail('capped'), role: 'editor', permissions: { canDelete: false } });
    assert.equal(capped.statusCode, 201, capped.body);

    // An admin whose canExport was taken away cannot hand it out.
    const admin = await joinWorkspace(app, owner, 'admin', { canExport: false });
    await refusedUnchanged(workspace, 'admin without canExport invites an admin', /^Cannot grant canExport/, () =>
      as(admin.headers, 'POST', '/api/team', { email: uniqueEmail('puppet'), role: 'admin' }),
    );
    assert.equal((await as(admin.headers, 'POST', '/api/team', { email: uniqueEmail('a'), role: 'admin', permissions: { canExport: false } })).statusCode, 201);

    // The owner grants anything.
    const anything = await call(owner, 'POST', '/api/team', { email: uniqueEmail('any'), role: 'admin', permissions: { canExport: true, canDelete: true, canManageTeam: true } });
    assert.equal(anything.statusCode, 201, anything.body);
  });

  it('caps an update: the role and the effective permissions after merging (null resets included) stay within the caller\'s own', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    const manager = await joinWorkspace(app, owner, 'editor', { canManageTeam: true, canExport: false });
    const target = await joinWorkspace(app, owner, 'viewer');
    const url = `/api/team/${target.memberId}`;
    for (const method of ['PUT', 'PATCH'] as const) {
      await refusedUnchanged(workspace, `${method} to admin`, /^Cannot grant the admin role/, () => as(manager.headers, method, url, { role: 'admin' }));
      await refusedUnchanged(workspace, `${method} grants canExport`, /^Cannot grant canExport/, () =>
        as(manager.headers, method, url, { permissions: { canExport: true } }),
      );
      // An editor's defaults include canExport, which the manager lacks.
      await refusedUnchanged(workspace, `${method} to editor with the default canExport`, /^Cannot grant canExport/, () =>
        as(manager.headers, method, url, { role: 'editor' }),
      );
    }
    const promoted = await as(manager.headers, 'PATCH', url, { role: 'editor', permissions: { canExport: false, canManageTeam: true } });
    assert.equal(promoted.statusCode, 200, promoted.body);
    assert.deepEqual(promoted.json().permissions, { canExport: false, canDelete: true, canManageTeam: true });
    // null removes the override, so the role default (canExport for an editor) would apply again: refused.
    await refusedUnchanged(workspace, 'null resets canExport to the editor default', /^Cannot grant canExport/, () =>
      as(manager.headers, 'PATCH', url, { permissions: { canExport: null } }),
    );
    // Taking rights away is always within.
    const lowered = await as(manager.headers, 'PUT', url, { role: 'viewer', permissions: { canManageTeam: null } });
    assert.equal(lowered.statusCode, 200, lowered.body);
    assert.deepEqual(lowered.json().permissions, { canExport: false, canDelete: false, canManageTeam: false });
  });

  it('lets no member change their own membership, with any body, token or API key; leaving is allowed', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    // The hostile review's case: a viewer granted only canManageTeam makes themselves a full admin.
    const viewer = await joinWorkspace(app, owner, 'viewer', { canManageTeam: true });
    const own = `/api/team/${viewer.memberId}`;
    const key = (await api(app, viewer.user).post('/api/auth/api-keys', { name: 'mine' })).json().key as string;
    const byKey = { authorization: `Bearer ${key}`, 'account-id': workspace };
    for (const headers of [viewer.headers, byKey]) {
      for (const method of ['PUT', 'PATCH'] as const) {
        for (const body of [
          { role: 'admin', permissions: { canExport: true, canDelete: true, canManageTeam: true } },
          { permissions: { canDelete: true } },
          { role: 'viewer' },
          { permissions: { canManageTeam: false } },
          {},
        ]) {
          await refusedUnchanged(workspace, `${method} own row ${JSON.stringify(body)}`, OWN_ROW, () => as(headers, method, own, body));
        }
      }
    }
    // An admin too: their own row is not theirs to change.
    const admin = await joinWorkspace(app, owner, 'admin');
    await refusedUnchanged(workspace, 'admin demotes themselves', OWN_ROW, () => as(admin.headers, 'PATCH', `/api/team/${admin.memberId}`, { role: 'viewer' }));
    const after = (await call(owner, 'GET', own)).json();
    assert.deepEqual([after.role, after.permissions], ['viewer', { canExport: false, canDelete: false, canManageTeam: true }]);

    // Leaving is allowed, through the API key as well.
    const left = await as(byKey, 'DELETE', own);
    assert.equal(left.statusCode, 204, left.body);
    assert.equal((await as(viewer.headers, 'GET', '/api/agents')).statusCode, 404, 'gone from the account');
    const audit = (await db.query(`SELECT action, actor_user_id FROM audit_log WHERE account_id = $1 AND resource_id = $2 ORDER BY created_at`, [workspace, viewer.memberId])).rows;
    assert.deepEqual(audit.map((r) => r.action), ['team.invite', 'team.accept', 'team.remove']);
    assert.equal(audit[2].actor_user_id, viewer.user.id);
  });

  it('lets any member leave, with no right of the account: removing another member still needs canManageTeam', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    const viewer = await joinWorkspace(app, owner, 'viewer');
    const other = await joinWorkspace(app, owner, 'viewer');
    await refusedUnchanged(workspace, 'a plain viewer removes another member', 'canManageTeam is required', () =>
      as(viewer.headers, 'DELETE', `/api/team/${other.memberId}`),
    );
    await refusedUnchanged(workspace, 'a plain viewer changes their own row', 'canManageTeam is required', () =>
      as(viewer.headers, 'PATCH', `/api/team/${viewer.memberId}`, { role: 'admin' }),
    );
    const left = await as(viewer.headers, 'DELETE', `/api/team/${viewer.memberId}`);
    assert.equal(left.statusCode, 204, left.body);
    assert.equal((await as(viewer.headers, 'GET', '/api/agents')).statusCode, 404, 'gone from the account');
    assert.equal((await call(owner, 'GET', `/api/team/${other.memberId}`)).json().status, 'active', 'the other member stays');
  });

  it('lets no member change or remove a member who holds more than they do', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    const editor = await joinWorkspace(app, owner, 'editor', { canManageTeam: true });
    const admin = await joinWorkspace(app, owner, 'admin');
    const exporter = await joinWorkspace(app, owner, 'viewer', { canExport: true });
    const invitedAdmin = await invite(owner, { email: uniqueEmail('pending-admin'), role: 'admin' });
    // Without canExport the editor holds less than the exporting viewer too.
    const narrow = await joinWorkspace(app, owner, 'editor', { canManageTeam: true, canExport: false });
    const cases: [Member, string, string][] = [
      [editor, admin.memberId, 'the admin role'],
      [editor, invitedAdmin.id, 'the admin role'],
      [narrow, exporter.memberId, 'canExport'],
    ];
    for (const [caller, id, why] of cases) {
      const url = `/api/team/${id}`;
      for (const method of ['PUT', 'PATCH'] as const) {
        await refusedUnchanged(workspace, `${method} ${id}`, `Cannot change a member who holds more than you (${why})`, () =>
          as(caller.headers, method, url, { role: 'viewer', permissions: { canManageTeam: false } }),
        );
      }
      await refusedUnchanged(workspace, `DELETE ${id}`, `Cannot remove a member who holds more than you (${why})`, () => as(caller.headers, 'DELETE', url));
    }
    // An equal is fair game: the admin removes another admin, the editor changes an editor.
    const otherAdmin = await joinWorkspace(app, owner, 'admin');
    assert.equal((await as(admin.headers, 'PATCH', `/api/team/${otherAdmin.memberId}`, { permissions: { canDelete: false } })).statusCode, 200);
    assert.equal((await as(admin.headers, 'DELETE', `/api/team/${otherAdmin.memberId}`)).statusCode, 204);
    const peer = await joinWorkspace(app, owner, 'editor');
    assert.equal((await as(editor.headers, 'PATCH', `/api/team/${peer.memberId}`, { role: 'viewer' })).statusCode, 200);
    // The owner changes and removes anyone.
    assert.equal((await call(owner, 'PATCH', `/api/team/${admin.memberId}`, { role: 'viewer' })).statusCode, 200);
    assert.equal((await call(owner, 'DELETE', `/api/team/${invitedAdmin.id}`)).statusCode, 204);
  });

  it('caps a re-invite of a removed member like any invite', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    const editor = await joinWorkspace(app, owner, 'editor', { canManageTeam: true });
    const formerAdmin = await joinWorkspace(app, owner, 'admin');
    assert.equal((await call(owner, 'DELETE', `/api/team/${formerAdmin.memberId}`)).statusCode, 204);
    await refusedUnchanged(workspace, 're-invite as admin', /^Cannot grant the admin role/, () =>
      as(editor.headers, 'POST', '/api/team', { email: formerAdmin.user.email, role: 'admin' }),
    );
    const back = await as(editor.headers, 'POST', '/api/team', { email: formerAdmin.user.email, role: 'editor' });
    assert.equal(back.statusCode, 201, back.body);
    assert.equal(back.json().role, 'editor');
  });

  it('reads the caller\'s rights again under the team lock: a member downgraded while their write waits is held to the new rights', async () => {
    const owner = await registerUser(app);
    const workspace = await accountIdOf(app, owner);
    const downgrades: [string, Record<string, boolean>, RegExp | string][] = [
      ['viewer', {}, 'canManageTeam is required'],
      ['editor', { canManageTeam: true }, /^Cannot grant the admin role/],
    ];
    for (const [role, custom, refusal] of downgrades) {
      const admin = await joinWorkspace(app, owner, 'admin');
      const target = await joinWorkspace(app, owner, 'viewer');
      const before = await teamState(workspace);
      // Another team write of the account holds its lock; the admin's promotion (authenticated as an
      // admin) waits for it; meanwhile that write downgrades the admin, and commits.
      const blocker = await db.connect();
      let promotion: Promise<ApiResponse>;
      try {
        await blocker.query('BEGIN');
        await blocker.query(`SELECT pg_advisory_xact_lock(hashtext('team'), hashtext($1::text))`, [workspace]);
        promotion = as(admin.headers, 'PATCH', `/api/team/${target.memberId}`, { role: 'admin' });
        for (let i = 0; ; i++) {
          const { rows } = await db.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%' AND pid <> $1`,
            [(await blocker.query('SELECT pg_backend_pid() AS pid')).rows[0].pid],
          );
          if (rows[0].n === 1) break;
          assert.ok(i < 200, 'the promotion never reached the team lock');
          await new Promise((r) => setTimeout(r, 25));
        }
        await blocker.query(`UPDATE team_members SET role = $2, permissions = $3, updated_at = now() WHERE id = $1`, [admin.memberId, role, JSON.stringify(custom)]);
        await blocker.query('COMMIT');
      } finally {
        blocker.release();
      }
      const res = await promotion!;
      assertRefused(res, refusal, `downgraded to ${role}`);
      const after = await teamState(workspace);
      assert.equal(after.audit, before.audit, 'no audit entry');
      assert.deepEqual(after.members.find((m) => m.id === target.memberId), before.members.find((m) => m.id === target.memberId), 'target unchanged');
    }
  });

  // ---- Invitations expire ----

  it('expires an invitation after INVITATION_TTL: 409 naming the expiry, no longer listed to its addressee, and the address can be invited again', async (t) => {
    // A second API on this file's database whose invitations are open for one second.
    const { app: shortLived } = await startTestApp(t, { INVITATION_TTL: '1s' }, database);
    const owner = await registerUser(shortLived);
    const email = uniqueEmail('late');
    const invitee = await registerUser(shortLived, email);
    const res = await api(shortLived, owner).post('/api/team', { email, role: 'editor' });
    assert.equal(res.statusCode, 201, res.body);
    const { inviteToken, ...member } = res.json();
    assert.equal(Date.parse(member.expiresAt) - Date.parse(member.invitedAt), 1000);
    const listed = (await api(shortLived, invitee).get('/api/invitations')).json();
    assert.deepEqual(listed.map((i: { id: string; expiresAt: string }) => [i.id, i.expiresAt]), [[member.id, member.expiresAt]]);

    const waitStarted = Date.now();
    while (Date.now() <= Date.parse(member.expiresAt) + 20) await new Promise((r) => setTimeout(r, 50));
    console.log(`# waited ${Date.now() - waitStarted} ms for the invitation to expire`);

    const late = await api(shortLived, invitee).post(`/api/invitations/${member.id}/accept`, { token: inviteToken });
    assert.equal(late.statusCode, 409, late.body);
    assert.deepEqual(late.json(), { message: `Invitation expired at ${member.expiresAt}` });
    // Only to its addressee with its token: to anyone else it still does not exist.
    assert.equal((await api(shortLived, invitee).post(`/api/invitations/${member.id}/accept`, { token: 'inv_wrong' })).statusCode, 404);
    assert.deepEqual((await api(shortLived, invitee).get('/api/invitations')).json(), [], 'no longer open');
    const shown = (await api(shortLived, owner).get(`/api/team/${member.id}`)).json();
    assert.deepEqual([shown.status, shown.expiresAt], ['invited', member.expiresAt], 'the team list shows it, and when it expired');
    assert.equal((await api(shortLived, invitee).get('/api/accounts')).json().length, 1, 'no access gained');

    // Inviting the address again replaces the expired invitation (kept as history, withdrawn).
    const again = await api(shortLived, owner).post('/api/team', { email: email.toUpperCase(), role: 'viewer' });
    assert.equal(again.statusCode, 201, again.body);
    assert.notEqual(again.json().id, member.id);
    const history = (await api(shortLived, owner).get('/api/team?status=removed')).json();
    assert.deepEqual(history.map((m: { id: string }) => m.id), [member.id]);
    assert.equal((await api(shortLived, invitee).post(`/api/invitations/${member.id}/accept`, { token: inviteToken })).statusCode, 409);
    const accepted = await api(shortLived, invitee).post(`/api/invitations/${again.json().id}/accept`, { token: again.json().inviteToken });
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal(accepted.json().role, 'viewer');
  });

  it('an open invitation still blocks inviting its address again, and accepting one at the last moment works', async () => {
    const owner = await registerUser(app);
    const email = uniqueEmail('open');
    const member = await invite(owner, { email, role: 'viewer' });
    assert.equal((await call(owner, 'POST', '/api/team', { email, role: 'viewer' })).statusCode, 409);
    // One second before it expires it is still open.
    await db.query(`UPDATE team_members SET expires_at = now() + interval '1 second' WHERE id = $1`, [member.id]);
    const invitee = await registerUser(app, email);
    assert.equal((await accept(invitee, member.id)).statusCode, 200);
  });

  it('documents the team routes in OpenAPI', async () => {
    const doc = (await api(app).get('/api/openapi.json')).json();
    for (const path of ['/api/team', '/api/team/{id}', '/api/invitations', '/api/invitations/{id}/accept']) assert.ok(doc.paths[path], path);
    for (const schema of ['TeamMember', 'Invitation', 'InviteTeamMember', 'UpdateTeamMember']) assert.ok(doc.components.schemas[schema], schema);
  });
});
