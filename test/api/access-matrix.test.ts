import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { requireAuthentication } from '../../api/plugins/authenticate';
import type { Db } from '../../db/pool';
import { suiteContext } from '../helpers/cleanup';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { accountIdOf, joinWorkspace, type CustomPermissions, type Role } from '../helpers/workspaces';

/**
 * Every operation of the OpenAPI document × every role: what each role may do in the account it acts in,
 * as the table of the README's "Working as a team" says it, derived here from method and path alone:
 * - every GET is a read (any role), except the export (canExport) and the audit log (owner and admins);
 * - POST, PUT and PATCH are writes (owner, admin, editor; never a viewer);
 * - DELETE needs canDelete; any write under /api/team needs canManageTeam, but leaving (DELETE of one's own
 *   membership), which needs nothing;
 * - the caller's own things (/api/auth/…, /api/invitations, /api/accounts) need nothing of the account.
 * A refused request answers 403 naming the right and changes nothing (no audit entry, the resource still
 * there); an allowed one answers its documented success status, and a write in the account adds exactly one
 * audit entry by the actor. An operation this table has no request for fails the test: a route added later
 * gets a row here, and its rule is checked.
 *
 * Team writes also obey "no one grants more than they hold": a member invites or sets a role up to their
 * own and grants only permissions they hold, changes or removes no one who holds more, and never changes
 * their own membership (leaving is allowed); the owner may do anything. The matrix's team requests say what
 * they grant, and a table of its own walks every grant, target and the actor's own row for every actor.
 */

type Rule = 'read' | 'write' | 'delete' | 'manageTeam' | 'export' | 'audit' | 'self';

function ruleOf(method: string, path: string): Rule {
  if (/^\/api\/(auth\/|invitations|accounts$|settings$)/.test(path)) return 'self';
  if (path === '/api/agents/{id}/export') return 'export';
  if (path === '/api/account/audit') return 'audit';
  // The MCP server lets every role in; each of its tools checks the right of the REST call it stands for.
  if (path === '/api/mcp') return 'read';
  if (method === 'GET') return 'read';
  if (path.startsWith('/api/team')) return 'manageTeam';
  if (method === 'DELETE') return 'delete';
  return 'write';
}

type Permissions = { canExport: boolean; canDelete: boolean; canManageTeam: boolean };
const PERMISSION_KEYS = ['canExport', 'canDelete', 'canManageTeam'] as const;

interface Actor {
  name: string;
  role: 'owner' | Role;
  permissions: Permissions;
  custom?: CustomPermissions;
  user?: TestUser;
  /** The actor's own membership (members only). */
  memberId?: string;
  headers?: Record<string, string>;
}

const ALL = { canExport: true, canDelete: true, canManageTeam: true };
const NONE = { canExport: false, canDelete: false, canManageTeam: false };
const ACTORS: Actor[] = [
  { name: 'owner', role: 'owner', permissions: ALL },
  { name: 'admin', role: 'admin', permissions: ALL },
  { name: 'editor', role: 'editor', permissions: { canExport: true, canDelete: true, canManageTeam: false } },
  { name: 'viewer', role: 'viewer', permissions: NONE },
  { name: 'viewer granted every permission', role: 'viewer', permissions: ALL, custom: ALL },
  { name: 'admin denied every permission', role: 'admin', permissions: NONE, custom: NONE },
  {
    name: 'editor managing the team without canExport',
    role: 'editor',
    permissions: { canExport: false, canDelete: true, canManageTeam: true },
    custom: { canManageTeam: true, canExport: false },
  },
];

/** What a member holds (or a team write would give one): a role and effective permissions. */
interface Holding {
  role: Role;
  permissions: Permissions;
}
const ROLE_DEFAULTS: Record<Role, Permissions> = {
  admin: ALL,
  editor: { canExport: true, canDelete: true, canManageTeam: false },
  viewer: NONE,
};
const RANK: Record<Role, number> = { viewer: 0, editor: 1, admin: 2 };

/** Whether the actor holds at least `h`: the owner always; a member with a role as high and every permission `h` has. */
function holdsAtLeast(actor: Actor, h: Holding): boolean {
  if (actor.role === 'owner') return true;
  return RANK[h.role] <= RANK[actor.role] && PERMISSION_KEYS.every((k) => !h.permissions[k] || actor.permissions[k]);
}

/**
 * The refusal a team write gets from an actor who has canManageTeam, by the grant rules: a target who holds
 * more (`Cannot change|remove a member who holds more than you (…)`), or a grant beyond the actor's own
 * (`Cannot grant …`); null when within.
 */
function grantRefusal(actor: Actor, method: string, req: Request): RegExp | null {
  if (req.target && !holdsAtLeast(actor, req.target)) return new RegExp(`^Cannot ${method === 'DELETE' ? 'remove' : 'change'} a member who holds more than you \\(`);
  if (req.grants && !holdsAtLeast(actor, req.grants)) return /^Cannot grant /;
  return null;
}

function allowed(rule: Rule, actor: Actor): boolean {
  switch (rule) {
    case 'read':
    case 'self':
      return true;
    case 'write':
      return actor.role !== 'viewer';
    case 'delete':
      return actor.permissions.canDelete;
    case 'manageTeam':
      return actor.permissions.canManageTeam;
    case 'export':
      return actor.permissions.canExport;
    case 'audit':
      return actor.role === 'owner' || actor.role === 'admin';
  }
}

const REFUSALS: Record<Exclude<Rule, 'read' | 'self'>, string> = {
  write: 'The editor or admin role is required: viewers have read-only access to this account',
  delete: 'canDelete is required',
  manageTeam: 'canManageTeam is required',
  export: 'canExport is required',
  audit: 'The admin role is required to read the audit log',
};

/** What the operations work on: `shared` rows any request may use, `own` rows one actor's requests use up. */
interface Fixture {
  shared: Record<
    'agent' | 'tool' | 'connector' | 'trigger' | 'userTrigger' | 'cronTrigger' | 'cronUserTrigger' | 'webhook' | 'run' | 'finishedRun' | 'fire' | 'userFire' | 'member' | 'delivery' | 'recovery' | 'approval' | 'replay',
    string
  >;
  own: Record<'agent' | 'tool' | 'connector' | 'trigger' | 'userTrigger' | 'webhook' | 'recoverable' | 'replayable' | 'member' | 'apiKey' | 'delivery' | 'invitation' | 'run' | 'approval', string> & {
    invitationToken: string;
  };
}

/**
 * A request; a team write also says what it gives (`grants`: the member as it would be after it) and whom
 * it changes or removes (`target`: the member as they are), so the grant rules can be expected of it.
 */
type Request = { url: string; payload?: unknown; headers?: Record<string, string>; grants?: Holding; target?: Holding };
const unique = () => randomUUID().slice(0, 8);

/** A request for each operation, keyed `METHOD /path/{param}` as the document names it. */
const REQUESTS: Record<string, (f: Fixture) => Request> = {
  'GET /api/accounts': () => ({ url: '/api/accounts' }),
  'GET /api/account': () => ({ url: '/api/account' }),
  'GET /api/account/transactions': () => ({ url: '/api/account/transactions' }),
  'GET /api/account/usage': () => ({ url: '/api/account/usage' }),
  'GET /api/account/audit': () => ({ url: '/api/account/audit' }),
  'GET /api/auth/me': () => ({ url: '/api/auth/me' }),
  'GET /api/settings': () => ({ url: '/api/settings' }),
  'GET /api/auth/api-keys': () => ({ url: '/api/auth/api-keys' }),
  'POST /api/auth/api-keys': () => ({ url: '/api/auth/api-keys', payload: { name: 'k' } }),
  'DELETE /api/auth/api-keys/{id}': (f) => ({ url: `/api/auth/api-keys/${f.own.apiKey}` }),

  'GET /api/agents': () => ({ url: '/api/agents' }),
  'POST /api/agents': () => ({ url: '/api/agents', payload: { name: 'made' } }),
  'POST /api/agents/import': () => ({ url: '/api/agents/import', payload: { version: 1, agent: { name: 'imported' } } }),
  'GET /api/agents/{id}': (f) => ({ url: `/api/agents/${f.shared.agent}` }),
  'PUT /api/agents/{id}': (f) => ({ url: `/api/agents/${f.shared.agent}`, payload: { goal: 'put' } }),
  'PATCH /api/agents/{id}': (f) => ({ url: `/api/agents/${f.shared.agent}`, payload: { goal: 'patch' } }),
  'DELETE /api/agents/{id}': (f) => ({ url: `/api/agents/${f.own.agent}` }),
  'GET /api/agents/{id}/graph': (f) => ({ url: `/api/agents/${f.shared.agent}/graph` }),
  'PUT /api/agents/{id}/graph': (f) => ({ url: `/api/agents/${f.shared.agent}/graph`, payload: { nodes: [{ id: 'n', type: 't' }], edges: [] } }),
  'GET /api/agents/{id}/export': (f) => ({ url: `/api/agents/${f.shared.agent}/export` }),

  'GET /api/agents/{agentId}/connectors': (f) => ({ url: `/api/agents/${f.shared.agent}/connectors` }),
  'POST /api/agents/{agentId}/connectors': (f) => ({
    url: `/api/agents/${f.shared.agent}/connectors`, payload: { type: 'telegram', name: 'tg', configJson: { botToken: '1:abc' } },
  }),
  'GET /api/connectors/{id}': (f) => ({ url: `/api/connectors/${f.shared.connector}` }),
  'PUT /api/connectors/{id}': (f) => ({ url: `/api/connectors/${f.shared.connector}`, payload: { name: 'put' } }),
  'PATCH /api/connectors/{id}': (f) => ({ url: `/api/connectors/${f.shared.connector}`, payload: { name: 'patch' } }),
  'DELETE /api/connectors/{id}': (f) => ({ url: `/api/connectors/${f.own.connector}` }),

  'GET /api/agents/{agentId}/tools': (f) => ({ url: `/api/agents/${f.shared.agent}/tools` }),
  'POST /api/agents/{agentId}/tools': (f) => ({
    url: `/api/agents/${f.shared.agent}/tools`, payload: { type: 'coin_prices', name: 'p', configJson: { coinIds: ['bitcoin'] } },
  }),
  'GET /api/tools/{id}': (f) => ({ url: `/api/tools/${f.shared.tool}` }),
  'GET /api/tools/{id}/functions': (f) => ({ url: `/api/tools/${f.shared.tool}/functions` }),
  'POST /api/mcp': () => ({ url: '/api/mcp', payload: { jsonrpc: '2.0', id: 1, method: 'ping' }, headers: { accept: 'application/json, text/event-stream' } }),
  'PUT /api/tools/{id}': (f) => ({ url: `/api/tools/${f.shared.tool}`, payload: { name: 'put' } }),
  'PATCH /api/tools/{id}': (f) => ({ url: `/api/tools/${f.shared.tool}`, payload: { name: 'patch' } }),
  'DELETE /api/tools/{id}': (f) => ({ url: `/api/tools/${f.own.tool}` }),

  'GET /api/agents/{agentId}/triggers': (f) => ({ url: `/api/agents/${f.shared.agent}/triggers` }),
  'POST /api/agents/{agentId}/triggers': (f) => ({ url: `/api/agents/${f.shared.agent}/triggers`, payload: { type: 'webhook', name: 'w' } }),
  'GET /api/triggers/{id}': (f) => ({ url: `/api/triggers/${f.shared.trigger}` }),
  'PUT /api/triggers/{id}': (f) => ({ url: `/api/triggers/${f.shared.trigger}`, payload: { name: 'put' } }),
  'PATCH /api/triggers/{id}': (f) => ({ url: `/api/triggers/${f.shared.trigger}`, payload: { name: 'patch' } }),
  'DELETE /api/triggers/{id}': (f) => ({ url: `/api/triggers/${f.own.trigger}` }),
  'GET /api/triggers/{id}/fires': (f) => ({ url: `/api/triggers/${f.shared.trigger}/fires` }),
  'GET /api/triggers/{id}/fires/{fireId}': (f) => ({ url: `/api/triggers/${f.shared.trigger}/fires/${f.shared.fire}` }),
  'POST /api/triggers/{id}/fire': (f) => ({ url: `/api/triggers/${f.shared.trigger}/fire`, payload: {} }),
  'GET /api/triggers/{id}/expected-fires': (f) => ({ url: `/api/triggers/${f.shared.cronTrigger}/expected-fires` }),
  'GET /api/triggers/{id}/preview': (f) => ({ url: `/api/triggers/${f.shared.cronTrigger}/preview` }),
  'GET /api/triggers/{id}/timeline': (f) => ({ url: `/api/triggers/${f.shared.cronTrigger}/timeline` }),
  'GET /api/triggers/{id}/fires/{fireId}/deliveries': (f) => ({ url: `/api/triggers/${f.shared.trigger}/fires/${f.shared.fire}/deliveries` }),
  'GET /api/schedule-preview': () => ({ url: '/api/schedule-preview?cronExpression=@hourly' }),

  'GET /api/user-triggers': () => ({ url: '/api/user-triggers' }),
  'POST /api/user-triggers': () => ({ url: '/api/user-triggers', payload: { type: 'webhook', name: 'u' } }),
  'GET /api/user-triggers/{id}': (f) => ({ url: `/api/user-triggers/${f.shared.userTrigger}` }),
  'PUT /api/user-triggers/{id}': (f) => ({ url: `/api/user-triggers/${f.shared.userTrigger}`, payload: { name: 'put' } }),
  'PATCH /api/user-triggers/{id}': (f) => ({ url: `/api/user-triggers/${f.shared.userTrigger}`, payload: { name: 'patch' } }),
  'DELETE /api/user-triggers/{id}': (f) => ({ url: `/api/user-triggers/${f.own.userTrigger}` }),
  'GET /api/user-triggers/{id}/fires': (f) => ({ url: `/api/user-triggers/${f.shared.userTrigger}/fires` }),
  'GET /api/user-triggers/{id}/fires/{fireId}': (f) => ({ url: `/api/user-triggers/${f.shared.userTrigger}/fires/${f.shared.userFire}` }),
  'POST /api/user-triggers/{id}/fire': (f) => ({ url: `/api/user-triggers/${f.shared.userTrigger}/fire`, payload: {} }),
  'GET /api/user-triggers/{id}/expected-fires': (f) => ({ url: `/api/user-triggers/${f.shared.cronUserTrigger}/expected-fires` }),
  'GET /api/user-triggers/{id}/preview': (f) => ({ url: `/api/user-triggers/${f.shared.cronUserTrigger}/preview` }),
  'GET /api/user-triggers/{id}/timeline': (f) => ({ url: `/api/user-triggers/${f.shared.cronUserTrigger}/timeline` }),
  'GET /api/user-triggers/{id}/fires/{fireId}/deliveries': (f) => ({ url: `/api/user-triggers/${f.shared.userTrigger}/fires/${f.shared.userFire}/deliveries` }),

  'GET /api/webhooks': () => ({ url: '/api/webhooks' }),
  'POST /api/webhooks': () => ({ url: '/api/webhooks', payload: { name: 'w', url: 'http://127.0.0.1:9/hook' } }),
  'GET /api/webhooks/{id}': (f) => ({ url: `/api/webhooks/${f.shared.webhook}` }),
  'PUT /api/webhooks/{id}': (f) => ({ url: `/api/webhooks/${f.shared.webhook}`, payload: { name: 'put' } }),
  'PATCH /api/webhooks/{id}': (f) => ({ url: `/api/webhooks/${f.shared.webhook}`, payload: { name: 'patch' } }),
  'DELETE /api/webhooks/{id}': (f) => ({ url: `/api/webhooks/${f.own.webhook}` }),
  'GET /api/webhooks/{id}/deliveries': (f) => ({ url: `/api/webhooks/${f.shared.webhook}/deliveries` }),
  'GET /api/webhooks/{id}/deliveries/{deliveryId}': (f) => ({ url: `/api/webhooks/${f.shared.webhook}/deliveries/${f.shared.delivery}` }),
  'GET /api/webhooks/{id}/deliveries/{deliveryId}/attempts': (f) => ({ url: `/api/webhooks/${f.shared.webhook}/deliveries/${f.shared.delivery}/attempts` }),
  'POST /api/webhooks/{id}/deliveries/{deliveryId}/retry': (f) => ({ url: `/api/webhooks/${f.shared.webhook}/deliveries/${f.own.delivery}/retry` }),
  'POST /api/webhooks/{id}/test': (f) => ({ url: `/api/webhooks/${f.shared.webhook}/test`, payload: {} }),
  // A webhook of the actor's own: one recovery of a webhook runs at a time (no worker here finishes any).
  'POST /api/webhooks/{id}/recover': (f) => ({ url: `/api/webhooks/${f.own.recoverable}/recover`, payload: { since: new Date(Date.now() - 3_600_000).toISOString() } }),
  'GET /api/webhooks/{id}/recoveries/{recoveryId}': (f) => ({ url: `/api/webhooks/${f.shared.webhook}/recoveries/${f.shared.recovery}` }),
  'GET /api/webhooks/{id}/stats': (f) => ({ url: `/api/webhooks/${f.shared.webhook}/stats` }),
  'GET /api/webhooks/{id}/stats/series': (f) => ({ url: `/api/webhooks/${f.shared.webhook}/stats/series` }),

  'POST /api/agents/{id}/runs': (f) => ({ url: `/api/agents/${f.shared.agent}/runs`, payload: {} }),
  'GET /api/agents/{id}/runs': (f) => ({ url: `/api/agents/${f.shared.agent}/runs` }),
  'GET /api/runs': (f) => ({ url: `/api/runs?agentId=${f.shared.agent}` }),
  'GET /api/runs/{id}': (f) => ({ url: `/api/runs/${f.shared.run}` }),
  'GET /api/runs/{id}/steps': (f) => ({ url: `/api/runs/${f.shared.run}/steps` }),
  // A run of the actor's own: a cancel ends it (an ended run is a 409), so each actor cancels its own.
  'POST /api/runs/{id}/cancel': (f) => ({ url: `/api/runs/${f.own.run}/cancel` }),
  'GET /api/runs/{id}/events': (f) => ({ url: `/api/runs/${f.shared.finishedRun}/events` }),
  'POST /api/runs/{id}/rerun': (f) => ({ url: `/api/runs/${f.shared.finishedRun}/rerun`, payload: {} }),
  // An agent of the actor's own: one replay of an agent per RECOVER_INTERVAL.
  'POST /api/agents/{id}/runs/replay': (f) => ({ url: `/api/agents/${f.own.replayable}/runs/replay`, payload: { status: 'failed', since: new Date(Date.now() - 3_600_000).toISOString() } }),
  'GET /api/agents/{id}/runs/replays/{replayId}': (f) => ({ url: `/api/agents/${f.shared.agent}/runs/replays/${f.shared.replay}` }),
  'GET /api/approvals': () => ({ url: '/api/approvals?status=pending' }),
  'GET /api/approvals/{id}': (f) => ({ url: `/api/approvals/${f.shared.approval}` }),
  'GET /api/runs/{id}/approvals': (f) => ({ url: `/api/runs/${f.shared.run}/approvals` }),
  // An approval of the actor's own: a decision ends it (a second is a 409).
  'POST /api/approvals/{id}/decision': (f) => ({ url: `/api/approvals/${f.own.approval}/decision`, payload: { decision: 'reject', comment: 'no' } }),
  'GET /api/agents/{id}/threads/{threadId}/messages': (f) => ({ url: `/api/agents/${f.shared.agent}/threads/matrix/messages` }),

  'GET /api/team': () => ({ url: '/api/team' }),
  'POST /api/team': () => ({
    url: '/api/team', payload: { email: `invitee-${unique()}@example.com`, role: 'viewer' }, grants: { role: 'viewer', permissions: NONE },
  }),
  'GET /api/team/{id}': (f) => ({ url: `/api/team/${f.shared.member}` }),
  // The shared member is a viewer when each actor's turn begins (the PATCH below puts it back).
  'PUT /api/team/{id}': (f) => ({
    url: `/api/team/${f.shared.member}`, payload: { role: 'editor' },
    target: { role: 'viewer', permissions: NONE }, grants: { role: 'editor', permissions: ROLE_DEFAULTS.editor },
  }),
  'PATCH /api/team/{id}': (f) => ({
    url: `/api/team/${f.shared.member}`, payload: { role: 'viewer' }, grants: { role: 'viewer', permissions: NONE },
  }),
  'DELETE /api/team/{id}': (f) => ({ url: `/api/team/${f.own.member}`, target: { role: 'viewer', permissions: NONE } }),
  'GET /api/invitations': () => ({ url: '/api/invitations' }),
  'POST /api/invitations/{id}/accept': (f) => ({ url: `/api/invitations/${f.own.invitation}/accept`, payload: { token: f.own.invitationToken } }),
};


interface Operation {
  method: string;
  path: string;
  success: number;
}

describe('route × role matrix: every operation of the OpenAPI document, for every role', () => {
  let app: TestApp;
  let db: Db;
  const suite = suiteContext();
  let owner: TestUser;
  let workspace: string;
  let operations: Operation[];
  const shared = {} as Fixture['shared'];

  const inject = (headers: Record<string, string>, method: string, url: string, payload?: unknown) =>
    app.inject({ method: method as 'GET', url, headers, payload: payload as object });
  const created = async (url: string, payload: unknown) => {
    const res = await inject(owner.auth, 'POST', url, payload);
    assert.ok(res.statusCode === 201 || res.statusCode === 202, `${url}: ${res.statusCode} ${res.body}`);
    return res.json().id as string;
  };
  const auditCount = async () => Number((await db.query('SELECT count(*) FROM audit_log WHERE account_id = $1', [workspace])).rows[0].count);
  const lastAuditActor = async () =>
    (await db.query('SELECT actor_user_id FROM audit_log WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1', [workspace])).rows[0]
      ?.actor_user_id;

  /** A delivery of the workspace's webhook that has failed, so it can be retried. */
  async function failedDelivery(): Promise<string> {
    const { rows } = await db.query(`INSERT INTO events (account_id, type, data) VALUES ($1, 'agent.updated', '{}') RETURNING id`, [workspace]);
    const res = await db.query(
      `INSERT INTO deliveries (account_id, webhook_id, event_id, status, attempts) VALUES ($1, $2, $3, 'failed', 1) RETURNING id`,
      [workspace, shared.webhook, rows[0].id],
    );
    return res.rows[0].id;
  }

  async function fireOf(triggerId: string): Promise<string> {
    const key = randomUUID();
    const { rows } = await db.query(
      `INSERT INTO fires (account_id, trigger_id, fire_key, source, status) VALUES ($1, $2, $3, 'manual', 'fired') RETURNING id`,
      [workspace, triggerId, `manual-${key}`],
    );
    return rows[0].id;
  }

  /** Rows one actor's requests use up (deletes, a retry, an invitation to accept). */
  async function ownRows(actor: Actor): Promise<Fixture['own']> {
    const agent = await created('/api/agents', { name: `victim of ${actor.name}` });
    const inviter = await registerUser(app);
    const invitation = await inject(inviter.auth, 'POST', '/api/team', { email: actor.user!.email, role: 'viewer' });
    assert.equal(invitation.statusCode, 201, invitation.body);
    const key = await inject(actor.user!.auth, 'POST', '/api/auth/api-keys', { name: 'victim' });
    return {
      agent,
      tool: await created(`/api/agents/${shared.agent}/tools`, { type: 'coin_prices', name: 'v', configJson: { coinIds: ['x'] } }),
      connector: await created(`/api/agents/${shared.agent}/connectors`, { type: 'telegram', name: 'v', configJson: { botToken: '1:v' } }),
      trigger: await created(`/api/agents/${shared.agent}/triggers`, { type: 'webhook', name: 'v' }),
      userTrigger: await created('/api/user-triggers', { type: 'webhook', name: 'v' }),
      webhook: await created('/api/webhooks', { name: 'v', url: 'http://127.0.0.1:9/v' }),
      recoverable: await created('/api/webhooks', { name: 'r', url: 'http://127.0.0.1:9/r' }),
      replayable: await created('/api/agents', { name: `replayed by ${actor.name}` }),
      member: await created('/api/team', { email: `victim-${unique()}@example.com`, role: 'viewer' }),
      apiKey: key.json().id,
      delivery: await failedDelivery(),
      run: await created(`/api/agents/${shared.agent}/runs`, {}),
      approval: await pendingApproval(),
      invitation: invitation.json().id,
      invitationToken: invitation.json().inviteToken,
    };
  }

  /** A pending approval of a waiting run, as a worker leaves it (no worker runs here). */
  async function pendingApproval(): Promise<string> {
    const runId = await created(`/api/agents/${shared.agent}/runs`, {});
    await db.query(`UPDATE runs SET status = 'waiting' WHERE id = $1`, [runId]);
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO approvals (account_id, run_id, step_index, agent_id, tool_id, arguments, expires_at)
       SELECT account_id, id, 1, agent_id, NULL, '{}'::jsonb, now() + interval '1 hour' FROM runs WHERE id = $1 RETURNING id`,
      [runId],
    );
    return rows[0]!.id;
  }

  before(async () => {
    ({ app, db } = await startTestApp(suite, { INITIAL_BALANCE: '1000000' }));
    owner = await registerUser(app);
    workspace = await accountIdOf(app, owner);
    for (const actor of ACTORS) {
      if (actor.role === 'owner') {
        Object.assign(actor, { user: owner, headers: owner.auth });
      } else {
        const member = await joinWorkspace(app, owner, actor.role, actor.custom);
        Object.assign(actor, { user: member.user, memberId: member.memberId, headers: member.headers });
      }
    }
    shared.agent = await created('/api/agents', { name: 'shared' });
    shared.tool = await created(`/api/agents/${shared.agent}/tools`, { type: 'coin_prices', name: 't', configJson: { coinIds: ['bitcoin'] } });
    shared.connector = await created(`/api/agents/${shared.agent}/connectors`, { type: 'telegram', name: 'c', configJson: { botToken: '1:c' } });
    shared.trigger = await created(`/api/agents/${shared.agent}/triggers`, { type: 'webhook', name: 't' });
    shared.userTrigger = await created('/api/user-triggers', { type: 'webhook', name: 'u' });
    shared.cronTrigger = await created(`/api/agents/${shared.agent}/triggers`, { type: 'cron', name: 'c', configJson: { cronExpression: '@hourly' } });
    shared.cronUserTrigger = await created('/api/user-triggers', { type: 'cron', name: 'c', configJson: { cronExpression: '@daily' } });
    shared.webhook = await created('/api/webhooks', { name: 'w', url: 'http://127.0.0.1:9/w' });
    shared.run = await created(`/api/agents/${shared.agent}/runs`, {});
    // A finished run, so that its event stream ends (no worker runs here).
    shared.finishedRun = await created(`/api/agents/${shared.agent}/runs`, {});
    await db.query(`UPDATE runs SET status = 'succeeded', finished_at = now() WHERE id = $1`, [shared.finishedRun]);
    shared.member = await created('/api/team', { email: `shared-${unique()}@example.com`, role: 'viewer' });
    shared.approval = await pendingApproval();
    shared.fire = await fireOf(shared.trigger);
    shared.userFire = await fireOf(shared.userTrigger);
    shared.delivery = await failedDelivery();
    shared.recovery = await created(`/api/webhooks/${shared.webhook}/recover`, { since: new Date(Date.now() - 3_600_000).toISOString() });
    shared.replay = await created(`/api/agents/${shared.agent}/runs/replay`, { status: 'failed', since: new Date(Date.now() - 3_600_000).toISOString() });

    const doc = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    operations = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>)) {
      for (const [method, op] of Object.entries(ops)) {
        if (Array.isArray(op.security) && op.security.length === 0) continue; // public: no account, no role
        const success = Object.keys(op.responses).map(Number).find((s) => s >= 200 && s < 300)!;
        operations.push({ method: method.toUpperCase(), path, success });
      }
    }
  });

  it('has a request for every authenticated operation of the document', () => {
    const missing = operations.map((o) => `${o.method} ${o.path}`).filter((key) => !REQUESTS[key]);
    assert.deepEqual(missing, [], 'operations with no row in this matrix: add one (and the README table if its rule is new)');
    assert.ok(operations.length >= 60, `only ${operations.length} operations`);
  });

  for (const actor of ACTORS) {
    it(`${actor.name}: every operation allowed or refused as the table says`, async () => {
      const own = await ownRows(actor);
      const fixture: Fixture = { shared, own };
      const problems: string[] = [];
      for (const op of operations) {
        const key = `${op.method} ${op.path}`;
        const build = REQUESTS[key];
        if (!build) continue; // reported by the test above
        const rule = ruleOf(op.method, op.path);
        const request = build(fixture);
        const { url, payload } = request;
        const before = await auditCount();
        const res = await inject({ ...actor.headers!, ...request.headers }, op.method, url, payload);
        const after = await auditCount();
        const capped = rule === 'manageTeam' && allowed(rule, actor) ? grantRefusal(actor, op.method, request) : null;
        if (capped) {
          if (res.statusCode !== 403 || !capped.test(res.json().message)) problems.push(`${key} (grant): ${res.statusCode} ${res.body.slice(0, 200)}, expected 403 ${capped}`);
          if (after !== before) problems.push(`${key}: refused, yet ${after - before} audit entries`);
        } else if (allowed(rule, actor)) {
          if (res.statusCode !== op.success) problems.push(`${key} (${rule}): ${res.statusCode}, expected ${op.success}: ${res.body.slice(0, 200)}`);
          const audited = op.method !== 'GET' && rule !== 'self' && rule !== 'read';
          if (after !== before + (audited ? 1 : 0)) problems.push(`${key}: ${after - before} audit entries, expected ${audited ? 1 : 0}`);
          if (audited && (await lastAuditActor()) !== actor.user!.id) problems.push(`${key}: audited with another actor`);
        } else {
          const expected = REFUSALS[rule as keyof typeof REFUSALS];
          if (res.statusCode !== 403 || res.json().message !== expected) {
            problems.push(`${key} (${rule}): ${res.statusCode} ${res.body.slice(0, 200)}, expected 403 "${expected}"`);
          }
          if (after !== before) problems.push(`${key}: refused, yet ${after - before} audit entries`);
          if (op.method === 'DELETE') {
            const still = await inject(owner.auth, 'GET', url);
            if (still.statusCode !== 200) problems.push(`${key}: refused, yet the resource answers ${still.statusCode}`);
          }
        }
      }
      assert.deepEqual(problems, []);
    });
  }

  it('refuses before reading the body: a viewer\'s invalid write is a 403, not a 400', async () => {
    const viewer = ACTORS.find((a) => a.name === 'viewer')!;
    const res = await inject(viewer.headers!, 'POST', '/api/agents', { name: '', nonsense: true });
    assert.equal(res.statusCode, 403);
  });

  it('refuses to start an app with an authenticated route that declares no access rule', async () => {
    const bare = Fastify();
    requireAuthentication(bare, {} as Parameters<typeof requireAuthentication>[1]);
    assert.throws(() => bare.get('/api/forgotten', async () => 'x'), /GET \/api\/forgotten: an authenticated route needs config\.access/);
    assert.doesNotThrow(() => bare.get('/api/open', { config: { public: true } }, async () => 'x'));
    assert.doesNotThrow(() => bare.get('/api/ruled', { config: { access: 'read' } }, async () => 'x'));
    await bare.close();
  });
  /**
   * The grant rules, case by case, for every actor: inviting each role and granting each permission, setting
   * each role and permission on a viewer, changing and removing a member who holds more (an admin; a viewer
   * with canExport), changing one's own membership, and last leaving. The expected answer comes from the
   * actor's role and permissions alone (holdsAtLeast); a refused case writes nothing.
   */
  for (const actor of ACTORS) {
    it(`${actor.name}: team writes grant no more than the actor holds`, async () => {
      const problems: string[] = [];
      const invited = async (role: Role, permissions: CustomPermissions = {}) =>
        (await inject(owner.auth, 'POST', '/api/team', { email: `target-${unique()}@example.com`, role, permissions })).json().id as string;
      const holding = (role: Role, custom: CustomPermissions = {}): Holding => ({ role, permissions: { ...ROLE_DEFAULTS[role], ...custom } });
      type Case = { name: string; method: string; url: string; payload?: unknown; grants?: Holding; target?: Holding; own?: boolean; success: number };
      const cases: Case[] = [];
      for (const role of ['admin', 'editor', 'viewer'] as const) {
        cases.push({ name: `invite ${role}`, method: 'POST', url: '/api/team', payload: { email: `g-${unique()}@example.com`, role }, grants: holding(role), success: 201 });
        const viewer = await invited('viewer');
        cases.push({ name: `set ${role}`, method: 'PATCH', url: `/api/team/${viewer}`, payload: { role }, target: holding('viewer'), grants: holding(role), success: 200 });
      }
      for (const key of PERMISSION_KEYS) {
        cases.push({
          name: `invite a viewer with ${key}`, method: 'POST', url: '/api/team',
          payload: { email: `g-${unique()}@example.com`, role: 'viewer', permissions: { [key]: true } }, grants: holding('viewer', { [key]: true }), success: 201,
        });
        const viewer = await invited('viewer');
        cases.push({
          name: `grant ${key}`, method: 'PUT', url: `/api/team/${viewer}`, payload: { permissions: { [key]: true } },
          target: holding('viewer'), grants: holding('viewer', { [key]: true }), success: 200,
        });
      }
      for (const [label, role, custom] of [['an admin', 'admin', {}], ['a viewer with canExport', 'viewer', { canExport: true }]] as const) {
        const change = await invited(role, custom);
        cases.push({ name: `demote ${label}`, method: 'PATCH', url: `/api/team/${change}`, payload: { role: 'viewer', permissions: { canExport: false } }, target: holding(role, custom), success: 200 });
        const remove = await invited(role, custom);
        cases.push({ name: `remove ${label}`, method: 'DELETE', url: `/api/team/${remove}`, target: holding(role, custom), success: 204 });
      }
      if (actor.memberId) {
        for (const payload of [{ role: 'admin', permissions: ALL }, { role: 'viewer' }, {}]) {
          cases.push({ name: `own row ${JSON.stringify(payload)}`, method: 'PATCH', url: `/api/team/${actor.memberId}`, payload, own: true, success: 200 });
        }
        cases.push({ name: 'leave', method: 'DELETE', url: `/api/team/${actor.memberId}`, success: 204 }); // last: the actor is gone after it
      }

      for (const c of cases) {
        // Leaving needs no right: any member may remove their own membership.
        const expected: RegExp | string | null = c.name === 'leave'
          ? null
          : !actor.permissions.canManageTeam
          ? REFUSALS.manageTeam
          : c.own
            ? /^A member cannot change their own membership/
            : grantRefusal(actor, c.method, c);
        const before = await auditCount();
        const rows = (await db.query('SELECT id, role, permissions, status FROM team_members WHERE account_id = $1 ORDER BY id', [workspace])).rows;
        const res = await inject(actor.headers!, c.method, c.url, c.payload);
        const after = await auditCount();
        if (expected === null) {
          if (res.statusCode !== c.success) problems.push(`${c.name}: ${res.statusCode} ${res.body.slice(0, 200)}, expected ${c.success}`);
          else if (after !== before + 1 || (await lastAuditActor()) !== actor.user!.id) problems.push(`${c.name}: not audited once by the actor`);
        } else {
          const message = res.statusCode === 403 ? (res.json().message as string) : '';
          const matches = typeof expected === 'string' ? message === expected : expected.test(message);
          if (!matches) problems.push(`${c.name}: ${res.statusCode} ${res.body.slice(0, 200)}, expected 403 ${expected}`);
          const rowsAfter = (await db.query('SELECT id, role, permissions, status FROM team_members WHERE account_id = $1 ORDER BY id', [workspace])).rows;
          if (after !== before) problems.push(`${c.name}: refused, yet ${after - before} audit entries`);
          if (JSON.stringify(rowsAfter) !== JSON.stringify(rows)) problems.push(`${c.name}: refused, yet the team changed`);
        }
      }
      assert.deepEqual(problems, []);
    });
  }
});
