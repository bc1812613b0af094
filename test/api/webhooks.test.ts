import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { before, describe, it } from 'node:test';
import type { PoolClient } from 'pg';
import type { Db } from '../../db/pool';
import { createWebhooksRepository } from '../../db/repositories/webhooks';
import { api } from '../helpers/api';
import { readAllPages, registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { testSecretBox } from '../helpers/config';
import { joinWorkspace } from '../helpers/workspaces';

const PUBLIC_BASE_URL = 'https://api.example.test';
const whsec = (bytes: number) => `whsec_${randomBytes(bytes).toString('base64')}`;

describe('webhooks (docs/api.md § Webhooks)', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;

  before(async () => {
    // A trailing slash on purpose: the display URL must not get a double slash.
    ({ app, db } = await startTestApp(suite, { PUBLIC_BASE_URL: `${PUBLIC_BASE_URL}/` }));
  });

  const create = async (user: TestUser, payload: Record<string, unknown>) => {
    const res = await api(app, user).post('/api/webhooks', payload);
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const storedRow = async (id: string) =>
    (await db.query<{ url: string | null; secret_sealed: string | null }>('SELECT url, secret_sealed FROM webhooks WHERE id = $1', [id])).rows[0]!;

  it('creates an outgoing webhook with defaults', async () => {
    const user = await registerUser(app);
    const accountId = (await api(app, user).get('/api/account')).json().id;
    const res = await api(app, user).post('/api/webhooks', { name: '  Deploys  ', url: 'https://example.com/hook' });
    assert.equal(res.statusCode, 201);
    const hook = res.json();
    assert.deepEqual(Object.keys(hook).sort(), [
      'accountId', 'createdAt', 'direction', 'disabledReason', 'enabled', 'events', 'id', 'lastTriggered', 'name', 'secret', 'triggerCount', 'updatedAt', 'url',
    ]);
    assert.match(hook.id, /^[0-9a-f-]{36}$/);
    assert.equal(hook.accountId, accountId);
    assert.equal(hook.name, 'Deploys', 'trimmed');
    assert.equal(hook.url, 'https://example.com/hook');
    assert.equal(hook.direction, 'outgoing');
    assert.deepEqual(hook.events, ['*']);
    assert.equal(hook.enabled, true);
    assert.equal(hook.secret, null);
    assert.equal(hook.triggerCount, 0);
    assert.equal(hook.lastTriggered, null);
    assert.equal(hook.disabledReason, null);
    assert.ok(hook.createdAt.endsWith('Z') && !Number.isNaN(Date.parse(hook.createdAt)));
    assert.equal(hook.updatedAt, hook.createdAt);
    assert.deepEqual((await api(app, user).get(`/api/webhooks/${hook.id}`)).json(), hook);
    assert.equal((await storedRow(hook.id)).url, 'https://example.com/hook');
  });

  it('creates an incoming webhook: display URL shown, nothing stored, a sent url ignored', async () => {
    const user = await registerUser(app);
    const hook = await create(user, { name: 'Inbound', direction: 'incoming', url: 'https://ignored.example.com/x' });
    assert.equal(hook.direction, 'incoming');
    assert.equal(hook.url, `${PUBLIC_BASE_URL}/api/hooks/webhooks/${hook.id}`);
    assert.deepEqual(hook.events, ['webhook.received']);
    assert.equal(hook.enabled, true);
    assert.equal((await storedRow(hook.id)).url, null);
    assert.equal((await api(app, user).get(`/api/webhooks/${hook.id}`)).json().url, hook.url);

    const noUrl = await create(user, { name: 'Inbound 2', direction: 'incoming', events: ['webhook.received', 'webhook.received'] });
    assert.deepEqual(noUrl.events, ['webhook.received']);
  });

  it('keeps every field as written, removing duplicate events', async () => {
    const user = await registerUser(app);
    const secret = whsec(32);
    const hook = await create(user, {
      name: 'All fields', url: 'http://127.0.0.1:9/x', secret, events: ['agent.created', 'agent.completed', 'agent.created'], enabled: false,
    });
    assert.equal(hook.url, 'http://127.0.0.1:9/x', 'private targets are allowed when ALLOW_PRIVATE_TARGETS=true');
    assert.equal(hook.secret, secret);
    assert.deepEqual(hook.events, ['agent.created', 'agent.completed']);
    assert.equal(hook.enabled, false);
    // "*" covers every other type.
    assert.deepEqual((await create(user, { name: 'star', url: 'https://example.com/', events: ['agent.failed', '*'] })).events, ['*']);
    // whsec_ secrets at both ends of 24–64 bytes, and a plain secret of 8 and 256 characters.
    for (const s of [whsec(24), whsec(64), '12345678', 'x'.repeat(256)]) {
      assert.equal((await create(user, { name: 's', url: 'https://example.com/', secret: s })).secret, s);
    }
  });

  it('refuses invalid bodies with a message naming the field, and writes nothing', async () => {
    const user = await registerUser(app);
    const url = 'https://example.com/hook';
    const cases: [unknown, RegExp][] = [
      [{}, /^body\.name: is required/],
      [{ name: '', url }, /^body\.name:/],
      [{ name: '   ', url }, /^body\.name:/],
      [{ name: 'x'.repeat(201), url }, /^body\.name:/],
      [{ name: 'x' }, /^body\.url: is required for outgoing webhooks/],
      [{ name: 'x', direction: 'outgoing' }, /^body\.url: is required for outgoing webhooks/],
      [{ name: 'x', url: 'not a url' }, /^body\.url: must be an absolute http or https URL/],
      [{ name: 'x', url: '/relative/path' }, /^body\.url: must be an absolute http or https URL/],
      [{ name: 'x', url: 'ftp://example.com/file' }, /^body\.url: must be an absolute http or https URL/],
      [{ name: 'x', url: 'javascript:alert(1)' }, /^body\.url: must be an absolute http or https URL/],
      [{ name: 'x', url: 'https://user:pass@example.com/hook' }, /^body\.url: must not contain credentials/],
      [{ name: 'x', url: 'https://user@example.com/hook' }, /^body\.url: must not contain credentials/],
      [{ name: 'x', url: `https://example.com/${'a'.repeat(2000)}` }, /^body\.url:/],
      [{ name: 'x', url: 42 }, /^body\.url:/],
      [{ name: 'x', url, direction: 'sideways' }, /^body\.direction:/],
      [{ name: 'x', url, secret: 'short' }, /^body\.secret:/],
      [{ name: 'x', url, secret: 'x'.repeat(257) }, /^body\.secret:/],
      [{ name: 'x', url, secret: 12345678 }, /^body\.secret:/],
      [{ name: 'x', url, secret: 'whsec_not*base64!!' }, /^body\.secret: a "whsec_" secret/],
      [{ name: 'x', url, secret: 'whsec_abc' }, /^body\.secret: a "whsec_" secret/],
      [{ name: 'x', url, secret: whsec(23) }, /^body\.secret: a "whsec_" secret/],
      [{ name: 'x', url, secret: whsec(65) }, /^body\.secret: a "whsec_" secret/],
      [{ name: 'x', url, secret: '••••abcd' }, /^body\.secret: a masked value/],
      [{ name: 'x', url, events: [] }, /^body\.events:/],
      [{ name: 'x', url, events: 'agent.created' }, /^body\.events:/],
      [{ name: 'x', url, events: Array.from({ length: 51 }, () => 'agent.created') }, /^body\.events:/],
      [{ name: 'x', url, events: ['agent.created', 'agent.exploded'] }, /^body\.events\.1: must be "\*" or one of agent\.created/],
      [{ name: 'x', url, events: ['agent.created', 7] }, /^body\.events\.1:/],
      [{ name: 'x', direction: 'incoming', events: ['*'] }, /^body\.events\.0: "\*" is not allowed for incoming webhooks/],
      [{ name: 'x', direction: 'incoming', events: ['webhook.received', '*'] }, /^body\.events\.1: "\*" is not allowed/],
      [{ name: 'x', url, enabled: 'yes' }, /^body\.enabled:/],
      [{ name: 'x', url, triggerCount: 5 }, /triggerCount/],
      [{ name: 'x', url, lastTriggered: '2026-01-01T00:00:00.000Z' }, /lastTriggered/],
      [{ name: 'x', url, id: '00000000-0000-0000-0000-000000000000' }, /\bid\b/],
      [[], /^body/],
    ];
    for (const [payload, message] of cases) {
      const res = await api(app, user).post('/api/webhooks', payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 100));
      assert.deepEqual(Object.keys(res.json()), ['message']);
      assert.match(res.json().message, message, JSON.stringify(payload).slice(0, 100));
    }
    assert.deepEqual((await api(app, user).get('/api/webhooks')).json(), []);
  });

  it('shows the secret in full only to the request that set it, and never stores it in plaintext', async () => {
    const user = await registerUser(app);
    const first = 'first-secret-1234';
    const hook = await create(user, { name: 'Signed', url: 'https://example.com/hook', secret: first });
    assert.equal(hook.secret, first);
    const opened = async () => {
      const sealed = (await storedRow(hook.id)).secret_sealed;
      return sealed === null ? null : testSecretBox.open(sealed);
    };
    assert.equal(await opened(), first);
    assert.equal((await api(app, user).get(`/api/webhooks/${hook.id}`)).json().secret, '••••1234');
    assert.equal((await api(app, user).get('/api/webhooks')).json()[0].secret, '••••1234');

    // The masked value sent back (as a client echoing a GET would) keeps the secret.
    const echoed = await api(app, user).put(`/api/webhooks/${hook.id}`, { name: 'Renamed', secret: '••••1234' });
    assert.equal(echoed.statusCode, 200);
    assert.equal(echoed.json().secret, '••••1234');
    assert.equal(echoed.json().name, 'Renamed');
    assert.equal(await opened(), first);
    // Sending the same secret in full changes nothing, so nothing is revealed.
    assert.equal((await api(app, user).patch(`/api/webhooks/${hook.id}`, { secret: first })).json().secret, '••••1234');
    // A mask that matches nothing is refused, not stored.
    const wrongMask = await api(app, user).patch(`/api/webhooks/${hook.id}`, { secret: '••••9999' });
    assert.equal(wrongMask.statusCode, 400);
    assert.match(wrongMask.json().message, /^body\.secret: a masked value/);
    assert.equal(await opened(), first);

    const second = whsec(32);
    const changed = await api(app, user).patch(`/api/webhooks/${hook.id}`, { secret: second });
    assert.equal(changed.json().secret, second);
    assert.equal(await opened(), second);
    assert.equal((await api(app, user).get(`/api/webhooks/${hook.id}`)).json().secret, `••••${second.slice(-4)}`);

    const dump = (await db.query<{ row: string }>('SELECT row_to_json(w)::text AS row FROM webhooks w')).rows.map((r) => r.row).join('\n');
    assert.ok(dump.includes(hook.id), 'the dump covers the row');
    for (const plaintext of [first, second, second.slice('whsec_'.length)]) assert.ok(!dump.includes(plaintext), 'no plaintext secret at rest');

    const removed = await api(app, user).put(`/api/webhooks/${hook.id}`, { secret: null });
    assert.equal(removed.statusCode, 200);
    assert.equal(removed.json().secret, null);
    assert.equal((await storedRow(hook.id)).secret_sealed, null);
    assert.equal((await api(app, user).get(`/api/webhooks/${hook.id}`)).json().secret, null);
    // With no secret left, a masked value has nothing to stand for.
    assert.equal((await api(app, user).patch(`/api/webhooks/${hook.id}`, { secret: `••••${second.slice(-4)}` })).statusCode, 400);
  });

  it('a secret in the path (a Slack hook URL) and query names pass, pwd, jwt, session, code, signature: members without canExport see the origin only', async () => {
    const owner = await registerUser(app);
    const slack = 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX';
    const slackHook = await create(owner, { name: 'Slack', url: slack });
    const query = 'https://example.com/in?passphrase=q-pass-0001&pwd=q-pwd-0002&jwt=q-jwt-0003&session=q-sess-0004&code=q-code-0005&signature=q-sign-0006&team=7';
    const queryHook = await create(owner, { name: 'Query', url: query });
    const viewer = await joinWorkspace(app, owner, 'viewer');
    const noExport = await joinWorkspace(app, owner, 'editor', { canExport: false });
    for (const headers of [viewer.headers, noExport.headers]) {
      const list = await app.inject({ method: 'GET', url: '/api/webhooks', headers });
      assert.ok(!list.body.includes('XXXXXXXXXXXXXXXXXXXXXXXX') && !list.body.includes('q-'), list.body);
      assert.equal((await app.inject({ method: 'GET', url: `/api/webhooks/${slackHook.id}`, headers })).json().url, 'https://hooks.slack.com/…');
      assert.equal((await app.inject({ method: 'GET', url: `/api/webhooks/${queryHook.id}`, headers })).json().url, 'https://example.com/…');
    }
    // canExport shows the path, and masks each of those query values.
    assert.equal((await api(app, owner).get(`/api/webhooks/${slackHook.id}`)).json().url, slack);
    assert.equal(
      (await api(app, owner).get(`/api/webhooks/${queryHook.id}`)).json().url,
      'https://example.com/in?passphrase=••••0001&pwd=••••0002&jwt=••••0003&session=••••0004&code=••••0005&signature=••••0006&team=7',
    );
    // The origin-only url sent back by an editor without canExport stands for the stored one.
    const renamed = await app.inject({ method: 'PUT', url: `/api/webhooks/${slackHook.id}`, headers: noExport.headers, payload: { name: 'Renamed', url: 'https://hooks.slack.com/…' } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal((await storedRow(slackHook.id)).url, slack);
  });

  it('masks secret query values of the url (key, token, secret, password, sig, auth) on read; the url sent back as read keeps them', async () => {
    const owner = await registerUser(app);
    const url = 'https://example.com/hook?token=query-token-0001&team=7&sig=query-sig-0002';
    const shown = 'https://example.com/hook?token=••••0001&team=7&sig=••••0002';
    const hook = await create(owner, { name: 'Query', url });
    assert.equal(hook.url, url, 'shown in full to the request that set it');
    const viewer = await joinWorkspace(app, owner, 'viewer');
    for (const [headers, expected] of [[owner.auth, shown], [viewer.headers, 'https://example.com/…']] as const) {
      const item = await app.inject({ method: 'GET', url: `/api/webhooks/${hook.id}`, headers });
      const list = await app.inject({ method: 'GET', url: '/api/webhooks', headers });
      assert.equal(item.json().url, expected);
      assert.equal(list.json()[0].url, expected);
      for (const secret of ['query-token-0001', 'query-sig-0002']) assert.ok(!item.body.includes(secret) && !list.body.includes(secret), secret);
    }

    // Sent back exactly as read: kept, still masked; the stored url is unchanged.
    const echoed = await api(app, owner).put(`/api/webhooks/${hook.id}`, { name: 'Renamed', url: shown });
    assert.equal(echoed.statusCode, 200, echoed.body);
    assert.equal(echoed.json().url, shown);
    assert.equal((await storedRow(hook.id)).url, url);
    // Masks on a url that changed elsewhere (or a mask of another value) stand for nothing.
    const mismatch = 'body.url: a masked query value (••••…) can only be sent back with the URL exactly as read; a changed URL needs its secret values in full';
    for (const sent of [shown.replace('example.com', 'example.org'), shown.replace('team=7', 'team=8'), shown.replace('••••0002', '••••9999')]) {
      const res = await api(app, owner).patch(`/api/webhooks/${hook.id}`, { url: sent });
      assert.deepEqual([res.statusCode, res.json()], [400, { message: mismatch }], sent);
    }
    const fresh = await api(app, owner).post('/api/webhooks', { name: 'New', url: shown });
    assert.deepEqual([fresh.statusCode, fresh.json()], [400, { message: mismatch }], 'a create has no stored value for a mask to stand for');
    assert.equal((await storedRow(hook.id)).url, url);
    // A new value in full is stored and shown this once.
    const changed = url.replace('query-token-0001', 'query-token-0003');
    const res = await api(app, owner).patch(`/api/webhooks/${hook.id}`, { url: changed });
    assert.equal(res.json().url, changed);
    assert.equal((await api(app, owner).get(`/api/webhooks/${hook.id}`)).json().url, shown.replace('••••0001', '••••0003'));
    // Turning it incoming and back: the old url is gone, so a mask stands for nothing.
    assert.equal((await api(app, owner).patch(`/api/webhooks/${hook.id}`, { direction: 'incoming', events: ['webhook.received'] })).statusCode, 200);
    const revived = await api(app, owner).patch(`/api/webhooks/${hook.id}`, { direction: 'outgoing', url: shown, events: ['*'] });
    assert.equal(revived.statusCode, 400, revived.body);
  });

  it('updates partially with PUT and PATCH', async () => {
    const user = await registerUser(app);
    const hook = await create(user, { name: 'Partial', url: 'https://example.com/a', events: ['agent.created'], secret: 'keep-me-secret' });
    const put = await api(app, user).put(`/api/webhooks/${hook.id}`, { enabled: false });
    assert.equal(put.statusCode, 200);
    assert.deepEqual(put.json(), { ...hook, enabled: false, secret: '••••cret', updatedAt: put.json().updatedAt });
    assert.ok(Date.parse(put.json().updatedAt) >= Date.parse(hook.updatedAt));

    const patch = await api(app, user).patch(`/api/webhooks/${hook.id}`, { name: ' New name ', events: ['agent.failed', 'agent.completed', 'agent.failed'] });
    assert.equal(patch.statusCode, 200);
    assert.equal(patch.json().name, 'New name');
    assert.deepEqual(patch.json().events, ['agent.failed', 'agent.completed']);
    assert.equal(patch.json().enabled, false, 'kept from the PUT');
    assert.equal(patch.json().url, 'https://example.com/a');

    const moved = await api(app, user).patch(`/api/webhooks/${hook.id}`, { url: 'https://example.org/b', enabled: true });
    assert.equal(moved.json().url, 'https://example.org/b');
    assert.equal(moved.json().enabled, true);
    assert.equal(moved.json().name, 'New name');
    assert.equal((await api(app, user).patch(`/api/webhooks/${hook.id}`, {})).statusCode, 200);

    const before = (await api(app, user).get(`/api/webhooks/${hook.id}`)).json();
    for (const [body, message] of [
      [{ name: '' }, /^body\.name:/],
      [{ url: 'ftp://example.com/' }, /^body\.url: must be an absolute http or https URL/],
      [{ url: 'https://a:b@example.com/' }, /^body\.url: must not contain credentials/],
      [{ events: ['agent.created', 'nope'] }, /^body\.events\.1:/],
      [{ events: [] }, /^body\.events:/],
      [{ secret: 'short' }, /^body\.secret:/],
      [{ direction: 'both' }, /^body\.direction:/],
      [{ triggerCount: 10 }, /triggerCount/],
      [{ lastTriggered: null }, /lastTriggered/],
      [{ url: null }, /^body\.url:/],
    ] as const) {
      for (const method of ['PUT', 'PATCH'] as const) {
        const res = await api(app, user).request(method, `/api/webhooks/${hook.id}`, body);
        assert.equal(res.statusCode, 400, `${method} ${JSON.stringify(body)}`);
        assert.match(res.json().message, message, `${method} ${JSON.stringify(body)}`);
      }
    }
    assert.deepEqual((await api(app, user).get(`/api/webhooks/${hook.id}`)).json(), before, 'unchanged after refusals');
  });

  it('changes direction: incoming drops the target, outgoing needs one', async () => {
    const user = await registerUser(app);
    const hook = await create(user, { name: 'Flip', url: 'https://example.com/out', events: ['agent.completed'] });

    const incoming = await api(app, user).patch(`/api/webhooks/${hook.id}`, { direction: 'incoming', events: ['webhook.received'] });
    assert.equal(incoming.statusCode, 200);
    assert.equal(incoming.json().url, `${PUBLIC_BASE_URL}/api/hooks/webhooks/${hook.id}`);
    assert.equal((await storedRow(hook.id)).url, null, 'stored target dropped');

    // A url sent to an incoming webhook is ignored, as on create.
    const ignored = await api(app, user).patch(`/api/webhooks/${hook.id}`, { url: 'https://example.com/elsewhere' });
    assert.equal(ignored.statusCode, 200);
    assert.equal(ignored.json().url, incoming.json().url);
    assert.equal((await storedRow(hook.id)).url, null);
    const star = await api(app, user).patch(`/api/webhooks/${hook.id}`, { events: ['*'] });
    assert.equal(star.statusCode, 400);
    assert.match(star.json().message, /^body\.events\.0: "\*" is not allowed for incoming webhooks/);

    // Back to outgoing: the old target is gone, so the request must bring one.
    const noUrl = await api(app, user).put(`/api/webhooks/${hook.id}`, { direction: 'outgoing' });
    assert.equal(noUrl.statusCode, 400);
    assert.equal(noUrl.json().message, 'body.url: is required for outgoing webhooks');
    const outgoing = await api(app, user).put(`/api/webhooks/${hook.id}`, { direction: 'outgoing', url: 'https://example.com/back' });
    assert.equal(outgoing.statusCode, 200);
    assert.equal(outgoing.json().direction, 'outgoing');
    assert.equal(outgoing.json().url, 'https://example.com/back');
    assert.equal((await storedRow(hook.id)).url, 'https://example.com/back');

    // An outgoing webhook listening to "*" can't turn incoming without new events; the result is validated as a whole.
    const all = await create(user, { name: 'All', url: 'https://example.com/all' });
    const refused = await api(app, user).patch(`/api/webhooks/${all.id}`, { direction: 'incoming' });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.json().message, /^body\.events: the current events include "\*"/);
    assert.equal((await api(app, user).get(`/api/webhooks/${all.id}`)).json().direction, 'outgoing');
    const turned = await api(app, user).patch(`/api/webhooks/${all.id}`, { direction: 'incoming', events: ['webhook.received'] });
    assert.equal(turned.statusCode, 200);
    assert.deepEqual(turned.json().events, ['webhook.received']);
  });

  it('refuses, for incoming webhooks, every event type the platform itself emits', async () => {
    const user = await registerUser(app);
    const reserved = ['agent.created', 'agent.updated', 'agent.deleted', 'agent.triggered', 'agent.completed', 'agent.failed', 'trigger.fired', 'webhook.test'];
    for (const type of reserved) {
      const res = await api(app, user).post('/api/webhooks', { name: 'forger', direction: 'incoming', events: ['webhook.received', type] });
      assert.equal(res.statusCode, 400, type);
      assert.equal(
        res.json().message,
        `body.events.1: "${type}" is reserved for events the platform emits; an incoming webhook can emit only webhook.received`,
      );
    }
    assert.deepEqual((await api(app, user).get('/api/webhooks')).json(), [], 'nothing written');

    // Updates: sent events, and events kept from an outgoing webhook turning incoming.
    const hook = await create(user, { name: 'in', direction: 'incoming' });
    const patched = await api(app, user).patch(`/api/webhooks/${hook.id}`, { events: ['agent.completed'] });
    assert.equal(patched.statusCode, 400);
    assert.match(patched.json().message, /^body\.events\.0: "agent\.completed" is reserved/);
    const out = await create(user, { name: 'out', url: 'https://example.com/out', events: ['agent.completed', 'trigger.fired'] });
    const turned = await api(app, user).patch(`/api/webhooks/${out.id}`, { direction: 'incoming' });
    assert.equal(turned.statusCode, 400);
    assert.equal(
      turned.json().message,
      'body.events: the current events include "agent.completed", which an incoming webhook cannot emit (reserved for events the platform emits); send events',
    );
    assert.equal((await api(app, user).get(`/api/webhooks/${out.id}`)).json().direction, 'outgoing', 'unchanged');
    // Outgoing webhooks still subscribe to any type.
    assert.deepEqual(out.events, ['agent.completed', 'trigger.fired']);
  });

  it('deletes with 204, then 404', async () => {
    const user = await registerUser(app);
    const hook = await create(user, { name: 'Doomed', url: 'https://example.com/' });
    const del = await api(app, user).delete(`/api/webhooks/${hook.id}`);
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    for (const [method, body] of [['GET'], ['PUT', { name: 'x' }], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      assert.equal((await api(app, user).request(method, `/api/webhooks/${hook.id}`, body)).statusCode, 404, method);
    }
    assert.deepEqual((await api(app, user).get('/api/webhooks')).json(), []);
  });

  it('pages newest first with a Link header until the end, without gaps or repeats', async () => {
    const user = await registerUser(app);
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push((await create(user, { name: `p${i}`, direction: 'incoming' })).id);
    const { ids, pages, links } = await readAllPages(app, user, '/api/webhooks?limit=3');
    for (const next of links) assert.equal(next.origin, PUBLIC_BASE_URL);
    assert.equal(pages, 3);
    assert.deepEqual(ids, [...created].reverse());
  });

  it('shows one account nothing of another: 404 on every item route, absent from lists', async () => {
    const owner = await registerUser(app);
    const stranger = await registerUser(app);
    const hook = await create(owner, { name: 'Private', url: 'https://example.com/', secret: 'owner-secret-0001' });
    const missing = await api(app, stranger).get('/api/webhooks/00000000-0000-4000-8000-000000000000');
    for (const [method, body] of [['GET'], ['PUT', { name: 'x' }], ['PATCH', { enabled: false }], ['DELETE']] as const) {
      const res = await api(app, stranger).request(method, `/api/webhooks/${hook.id}`, body);
      assert.equal(res.statusCode, 404, method);
      assert.deepEqual(res.json(), missing.json(), 'same answer as an absent id');
    }
    assert.deepEqual((await api(app, stranger).get('/api/webhooks')).json(), []);
    const still = (await api(app, owner).get(`/api/webhooks/${hook.id}`)).json();
    assert.equal(still.name, 'Private');
    assert.equal(still.enabled, true);
    assert.equal((await api(app, owner).get('/api/webhooks')).json().length, 1);
  });

  it('counts deliveries beside the webhook row: two transactions counting one webhook do not wait for each other (docs/adr/0013-webhook-counts-beside-the-row.md)', async () => {
    const user = await registerUser(app);
    const hook = await create(user, { name: 'counted', url: 'https://example.com/counted' });
    const slot = async (c: PoolClient) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid % 64;
    const first = await db.connect();
    const others: PoolClient[] = [];
    try {
      await first.query('BEGIN');
      await createWebhooksRepository(first).countTriggered([hook.id], first);
      // Another connection, counting in another row (each connection counts in its own: its pid modulo 64).
      let second = await db.connect();
      while ((await slot(second)) === (await slot(first))) {
        others.push(second);
        second = await db.connect();
      }
      others.push(second);
      await second.query('SET statement_timeout = 5000');
      await createWebhooksRepository(second).countTriggered([hook.id], second); // would wait for `first`'s commit on the row
      await second.query('RESET statement_timeout');
      assert.equal((await api(app, user).ok('GET', `/api/webhooks/${hook.id}`)).triggerCount, 1, 'the uncommitted count is not seen');
      await first.query('COMMIT');
    } finally {
      first.release();
      for (const c of others) c.release();
    }
    const after = await api(app, user).ok('GET', `/api/webhooks/${hook.id}`);
    assert.equal(after.triggerCount, 2);
    assert.ok(after.lastTriggered);
    // The list and an update's answer show the same count.
    assert.equal((await api(app, user).ok('GET', '/api/webhooks?limit=100')).find((w: { id: string }) => w.id === hook.id).triggerCount, 2);
    assert.equal((await api(app, user).ok('PATCH', `/api/webhooks/${hook.id}`, { name: 'renamed' })).triggerCount, 2);
  });

  it('answers 404 for a malformed id and 401 without a credential', async () => {
    const user = await registerUser(app);
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      assert.equal((await api(app, user).request(method, '/api/webhooks/not-a-uuid', method === 'PATCH' ? {} : undefined)).statusCode, 404, method);
    }
    assert.equal((await api(app).get('/api/webhooks')).statusCode, 401);
    assert.equal((await api(app).post('/api/webhooks', { name: 'x', url: 'https://example.com/' })).statusCode, 401);
  });

  it('documents every webhook route in OpenAPI', async () => {
    const doc = (await api(app).get('/api/openapi.json')).json();
    assert.ok(doc.components.schemas.Webhook, 'Webhook schema');
    for (const [path, methods] of [['/api/webhooks', ['get', 'post']], ['/api/webhooks/{id}', ['get', 'put', 'patch', 'delete']]] as const) {
      for (const m of methods) assert.ok(doc.paths[path]?.[m], `${m} ${path}`);
    }
  });

  describe('with ALLOW_PRIVATE_TARGETS=false', () => {
    const strictSuite = suiteContext();
    let strict: TestApp;
    let strictDb: Db;
    before(async () => {
      ({ app: strict, db: strictDb } = await startTestApp(strictSuite, { ALLOW_PRIVATE_TARGETS: 'false' }));
    });

    const refused = [
      'http://127.0.0.1:9/x',
      'http://localhost/',
      'http://169.254.169.254/latest/meta-data',
      'http://10.1.2.3/',
      'http://192.168.0.1/',
      'http://[::1]/',
      'http://[fe80::1]/',
      'http://0x7f000001/',
      'http://[::ffff:127.0.0.1]/',
      'http://0.0.0.0/',
    ];

    it('refuses private, loopback and link-local targets on create and update', async () => {
      const user = await registerUser(strict);
      for (const url of refused) {
        const res = await api(strict, user).post('/api/webhooks', { name: 'x', url });
        assert.equal(res.statusCode, 400, url);
        assert.match(res.json().message, /^body\.url: must not point at/, url);
      }
      // A name that resolves to a private address (the machine's own, through /etc/hosts, like db.internal → 10.x):
      // the message names it as written and keeps what it resolved to to itself.
      const host = new URL(`http://${hostname()}/`).hostname;
      const internal = await api(strict, user).post('/api/webhooks', { name: 'x', url: `http://${host}:8080/hook` });
      assert.equal(internal.statusCode, 400);
      assert.deepEqual(internal.json(), { message: `body.url: must not point at a private, loopback or link-local address (${host})` });
      for (const url of ['ftp://example.com/x', 'javascript:alert(1)']) {
        const res = await api(strict, user).post('/api/webhooks', { name: 'x', url });
        assert.equal(res.statusCode, 400, url);
        assert.match(res.json().message, /^body\.url: must be an absolute http or https URL/, url);
      }
      assert.deepEqual((await api(strict, user).get('/api/webhooks')).json(), []);

      // A public IP literal needs no DNS and is accepted.
      const ok = await api(strict, user).post('/api/webhooks', { name: 'public', url: 'https://93.184.215.14/hook' });
      assert.equal(ok.statusCode, 201, ok.body);
      const id = ok.json().id;
      for (const method of ['PUT', 'PATCH'] as const) {
        const res = await api(strict, user).request(method, `/api/webhooks/${id}`, { url: 'http://10.1.2.3/' });
        assert.equal(res.statusCode, 400, method);
        assert.match(res.json().message, /^body\.url: must not point at/);
      }
      assert.equal((await api(strict, user).get(`/api/webhooks/${id}`)).json().url, 'https://93.184.215.14/hook');

      // Turning an incoming webhook outgoing vets the new target too.
      const incoming = (await api(strict, user).post('/api/webhooks', { name: 'in', direction: 'incoming' })).json();
      const toPrivate = await api(strict, user).patch(`/api/webhooks/${incoming.id}`, { direction: 'outgoing', url: 'http://192.168.0.1/' });
      assert.equal(toPrivate.statusCode, 400);
      assert.match(toPrivate.json().message, /^body\.url: must not point at/);
      const toPublic = await api(strict, user).patch(`/api/webhooks/${incoming.id}`, { direction: 'outgoing', url: 'https://93.184.215.14/in' });
      assert.equal(toPublic.statusCode, 200);
    });

    it('vets the target only when it changes', async () => {
      const user = await registerUser(strict);
      const hook = (await api(strict, user).post('/api/webhooks', { name: 'legacy', url: 'https://93.184.215.14/hook' })).json();
      // A target stored while private targets were allowed (e.g. before the setting changed).
      await strictDb.query(`UPDATE webhooks SET url = 'http://10.0.0.5/hook' WHERE id = $1`, [hook.id]);
      const rename = await api(strict, user).patch(`/api/webhooks/${hook.id}`, { name: 'renamed', enabled: false });
      assert.equal(rename.statusCode, 200, 'an update that leaves the url alone does not re-vet it');
      assert.equal((await api(strict, user).put(`/api/webhooks/${hook.id}`, { url: 'http://10.0.0.5/hook' })).statusCode, 200, 'same url: unchanged');
      const moved = await api(strict, user).put(`/api/webhooks/${hook.id}`, { url: 'http://10.0.0.6/hook' });
      assert.equal(moved.statusCode, 400);
      assert.match(moved.json().message, /^body\.url: must not point at/);
    });
  });
});
