import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { lookupsInFlight, LOOKUPS_PER_ACCOUNT } from '../../lib/network';
import { api, type ApiResponse } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { createTestDatabase } from '../helpers/database';
import { startNameserver, type TestNameserver } from '../helpers/nameserver';

const PASSWORD = 'correct horse battery';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `ready()` holds (checked every 20 ms), failing after `ms`. */
async function until(ready: () => boolean, ms: number, what: string): Promise<void> {
  const started = Date.now();
  while (!ready()) {
    if (Date.now() - started > ms) assert.fail(`not within ${ms} ms: ${what}`);
    await sleep(20);
  }
}

const timed = async (request: () => Promise<ApiResponse>): Promise<{ res: ApiResponse; ms: number }> => {
  const started = performance.now();
  const res = await request();
  return { res, ms: Math.round(performance.now() - started) };
};

const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)]!, max: sorted[sorted.length - 1]! };
};

/**
 * docs/api.md § URL checks: a webhook url or a tool endpoint is resolved without holding anything another
 * account needs (no pooled database connection, no thread of the pool scrypt uses), with quotas counted
 * before any lookup, a name that never resolves refused after 3 s, and lookups bounded per account. The
 * names are served by a loopback nameserver (DNS_SERVERS) that never answers names under .slow.test.
 */
describe('URL checks', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  let ns: TestNameserver;
  let attacker: TestUser;
  let other: TestUser;
  let otherAgent: string;
  let address = 0;

  before(async () => {
    ns = await startNameserver(suite, { 'ok.test': '93.184.215.14' });
    // The production pool's size: 10 requests holding a connection each would leave none for anyone else.
    const database = await createTestDatabase(suite, 10);
    ({ app, db } = await startTestApp(suite, { DNS_SERVERS: ns.address, ALLOW_PRIVATE_TARGETS: 'false' }, database));
    attacker = await registerUser(app);
    other = await registerUser(app);
    otherAgent = (await api(app, other).ok('POST', '/api/agents', { name: 'Mine' })).id;
  });

  /** The other tenant's login (scrypt), each from its own address (the auth rate limit stays out of the way). */
  const login = () => api(app, null, { remoteAddress: `10.9.${Math.floor(++address / 250)}.${address % 250}` }).post('/api/auth/login', { email: other.email, password: PASSWORD });
  /** The other tenant's reads: each takes a pooled connection. */
  const reads = () => [api(app, other).get('/api/agents'), api(app, other).get('/api/webhooks'), api(app, other).get(`/api/agents/${otherAgent}/tools`)];

  /** Logins and reads of the other tenant, one after another: each one's latency. */
  async function measureOther(rounds: number) {
    const logins: number[] = [];
    const readMs: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const signedIn = await timed(login);
      assert.equal(signedIn.res.statusCode, 200, signedIn.res.body);
      logins.push(signedIn.ms);
      for (const read of reads()) {
        const started = performance.now();
        const res = await read;
        assert.equal(res.statusCode, 200, res.body);
        readMs.push(Math.round(performance.now() - started));
      }
    }
    return { logins, reads: readMs };
  }

  const importOf = (tools: number, host: (i: number) => string) => ({
    version: 1,
    agent: { name: 'Free template', status: 'template' },
    tools: Array.from({ length: tools }, (_, i) => ({ type: 'custom', name: `tool ${i}`, configJson: { endpoint: `https://${host(i)}/api` } })),
  });

  it('a name that never resolves answers 400 naming the field after about 3 s, and nothing is written', async () => {
    const agent = (await api(app, attacker).ok('POST', '/api/agents', { name: 'A' })).id;
    const webhook = await timed(() => api(app, attacker).post('/api/webhooks', { name: 'w', url: 'https://never-1.slow.test/hook' }, { 'idempotency-key': 'never-1' }));
    const tool = await timed(() =>
      api(app, attacker).post(`/api/agents/${agent}/tools`, { type: 'custom', name: 't', configJson: { endpoint: 'https://never-2.slow.test/x' } }),
    );
    console.log(`never-resolving name: webhook create answered in ${webhook.ms} ms, tool create in ${tool.ms} ms`);
    assert.equal(webhook.res.statusCode, 400, webhook.res.body);
    assert.deepEqual(webhook.res.json(), { message: 'body.url: host never-1.slow.test did not resolve within 3000 ms' });
    assert.equal(tool.res.statusCode, 400, tool.res.body);
    assert.deepEqual(tool.res.json(), { message: 'body.configJson.endpoint: host never-2.slow.test did not resolve within 3000 ms' });
    for (const { ms } of [webhook, tool]) assert.ok(ms >= 2900 && ms < 10_000, `answered after ${ms} ms`);
    const written = await db.query(`SELECT (SELECT count(*) FROM webhooks WHERE account_id = $1)::int AS w, (SELECT count(*) FROM tools WHERE agent_id = $2)::int AS t`, [attacker.id, agent]);
    assert.deepEqual(written.rows[0], { w: 0, t: 0 });
    // Asked over UDP only: the nameserver was reached (never answering), with no second attempt by the service.
    assert.deepEqual(ns.asked('never-1.slow.test').map((q) => q.type).sort(), [1, 28]);
  });

  it('an import of 1,000 custom tools answers the quota 403 without a single lookup', async () => {
    const before = ns.queries.length;
    const res = await timed(() => api(app, attacker).post('/api/agents/import', importOf(1000, (i) => `t${i}.slow.test`), { 'idempotency-key': 'big-import' }));
    console.log(`1,000-tool import: ${res.res.statusCode} in ${res.ms} ms, ${ns.queries.length - before} lookups`);
    assert.equal(res.res.statusCode, 403, res.res.body);
    assert.deepEqual(res.res.json(), { message: 'at most 50 tools per agent' });
    assert.equal(ns.queries.length, before, 'no name was looked up');
  });

  it('an import looks each distinct host up once, before its transaction', async () => {
    const before = ns.queries.length;
    const res = await api(app, attacker).post('/api/agents/import', importOf(5, () => 'ok.test'), { 'idempotency-key': 'small-import' });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(ns.queries.slice(before).map((q) => `${q.name}/${q.type}`).sort(), ['ok.test/1', 'ok.test/28']);
  });

  it("one tenant's names that never answer stall none of another tenant's logins (scrypt), reads (database) or own URL checks", async () => {
    const normal = await measureOther(5);

    // The attack: 10 webhook creates under Idempotency-Key, 5 tool creates, two 1,000-tool imports, all at once.
    const agent = (await api(app, attacker).ok('POST', '/api/agents', { name: 'Attacker' })).id;
    const attack = [
      ...Array.from({ length: 10 }, (_, i) =>
        api(app, attacker).post('/api/webhooks', { name: `w${i}`, url: `https://hook-${i}.slow.test/x` }, { 'idempotency-key': `attack-${i}` }),
      ),
      ...Array.from({ length: 5 }, (_, i) =>
        api(app, attacker).post(`/api/agents/${agent}/tools`, { type: 'custom', name: `t${i}`, configJson: { endpoint: `https://tool-${i}.slow.test/x` } }),
      ),
      ...Array.from({ length: 2 }, (_, i) => api(app, attacker).post('/api/agents/import', importOf(1000, (n) => `i${i}-${n}.slow.test`), { 'idempotency-key': `imp-${i}` })),
    ];
    const attackStarted = performance.now();
    await until(() => lookupsInFlight().total >= 10, 2000, "the webhook creates' lookups in flight");
    // While they wait on the nameserver, they hold no pooled connection (sampled for 0.5 s, once the
    // attack's short queries, its quota counts and the imports' 403s, are over; the app's own background
    // work, such as handing the agent's outbox row to Temporal, may hold one for a moment).
    await sleep(300);
    const held: number[] = [];
    for (let i = 0; i < 10; i++, await sleep(50)) held.push(db.totalCount - db.idleCount + db.waitingCount);
    console.log(`during the attack: ${lookupsInFlight().total} lookups in flight; pooled connections checked out or awaited, sampled: ${held.join(' ')} (pool of ${db.options.max})`);

    const during = await measureOther(2);
    // …nor the other tenant's own URL checks (a name its nameserver answers).
    const otherCheck = await timed(() => api(app, other).post('/api/webhooks', { name: 'during', url: 'https://ok.test/during' }));
    const otherDone = performance.now() - attackStarted;
    const stillWaiting = lookupsInFlight().total;
    const results = await Promise.all(attack);
    const attackMs = Math.round(performance.now() - attackStarted);

    const n = stats(normal.logins);
    const d = stats(during.logins);
    const nr = stats(normal.reads);
    const dr = stats(during.reads);
    console.log(
      `other tenant, normal: login median ${n.median} ms (max ${n.max}), reads median ${nr.median} ms (max ${nr.max}); ` +
        `during the attack: login median ${d.median} ms (max ${d.max}), reads median ${dr.median} ms (max ${dr.max}); ` +
        `its webhook create (a lookup) ${otherCheck.ms} ms; measured within ${Math.round(otherDone)} ms of the attack's start, which ended after ${attackMs} ms`,
    );
    assert.equal(otherCheck.res.statusCode, 201, otherCheck.res.body);
    assert.ok(stillWaiting >= 10, `the attack was still waiting on DNS while the other tenant was measured (${stillWaiting} lookups left)`);
    assert.ok(Math.max(...held) <= 1, `requests waiting on DNS hold pooled connections: ${held.join(' ')}`);
    // A generous bound that only a stall breaks: the attack's lookups wait 3 s each.
    for (const ms of [...during.logins, ...during.reads, otherCheck.ms]) assert.ok(ms < 1500, `the other tenant waited ${ms} ms`);

    for (const [i, res] of results.slice(0, 10).entries()) {
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().message, `body.url: host hook-${i}.slow.test did not resolve within 3000 ms`);
    }
    for (const res of results.slice(10, 15)) assert.match(res.json().message, /^body\.configJson\.endpoint: host tool-\d\.slow\.test did not resolve within 3000 ms$/);
    for (const res of results.slice(15)) assert.deepEqual([res.statusCode, res.json()], [403, { message: 'at most 50 tools per agent' }]);
    assert.equal(ns.asked('.slow.test').filter((q) => /^i\d-/.test(q.name)).length, 0, 'the imports looked nothing up');
    assert.equal(lookupsInFlight().total, 0);
  });

  it("an account's lookups are bounded (429 past its share) and another account's checks go on", async () => {
    const creates = Array.from({ length: LOOKUPS_PER_ACCOUNT }, (_, i) => api(app, attacker).post('/api/webhooks', { name: `b${i}`, url: `https://busy-${i}.slow.test/x` }));
    await until(() => lookupsInFlight().total >= LOOKUPS_PER_ACCOUNT, 2000, "the account's share of lookups in flight");
    const refused = await timed(() => api(app, attacker).post('/api/webhooks', { name: 'one more', url: 'https://one-more.slow.test/x' }));
    const mine = await timed(() => api(app, other).post('/api/webhooks', { name: 'mine', url: 'https://ok.test/hook' }));
    console.log(`with the account's ${LOOKUPS_PER_ACCOUNT} lookups in flight: its next create answered ${refused.res.statusCode} in ${refused.ms} ms; another account's ${mine.res.statusCode} in ${mine.ms} ms`);
    assert.equal(refused.res.statusCode, 429, refused.res.body);
    assert.equal(refused.res.headers['retry-after'], '3');
    assert.match(refused.res.json().message, new RegExp(`this account has ${LOOKUPS_PER_ACCOUNT} address lookups in progress`));
    assert.equal(ns.asked('one-more.slow.test').length, 0);
    assert.equal(mine.res.statusCode, 201, mine.res.body);
    for (const res of await Promise.all(creates)) assert.equal(res.statusCode, 400, res.body);
  });

  it("an update's URL check holds neither the row's lock nor a connection: a rename of the same tool or webhook answers meanwhile", async () => {
    const agent = (await api(app, other).ok('POST', '/api/agents', { name: 'Updated' })).id;
    const tool = await api(app, other).ok('POST', `/api/agents/${agent}/tools`, { type: 'custom', name: 't', configJson: { endpoint: 'https://ok.test/x' } });
    const webhook = await api(app, other).ok('POST', '/api/webhooks', { name: 'w', url: 'https://ok.test/w' });
    for (const [url, move] of [
      [`/api/tools/${tool.id}`, { configJson: { endpoint: 'https://moved-tool.slow.test/x' } }],
      [`/api/webhooks/${webhook.id}`, { url: 'https://moved-hook.slow.test/w' }],
    ] as const) {
      const moving = timed(() => api(app, other).patch(url, move));
      await until(() => lookupsInFlight().total >= 1, 2000, 'the move being checked');
      const rename = await timed(() => api(app, other).patch(url, { name: 'renamed meanwhile' }));
      const moved = await moving;
      console.log(`${url.split('/')[2]} update: the rename answered in ${rename.ms} ms while the move's check took ${moved.ms} ms`);
      assert.equal(rename.res.statusCode, 200, rename.res.body);
      assert.ok(rename.ms < 1500, `the rename waited ${rename.ms} ms`);
      assert.equal(moved.res.statusCode, 400, moved.res.body);
      assert.match(moved.res.json().message, /^body\.(configJson\.endpoint|url): host moved-(tool|hook)\.slow\.test did not resolve within 3000 ms$/);
      assert.equal((await api(app, other).get(url)).json().name, 'renamed meanwhile');
    }
  });

  it('a create under Idempotency-Key looks its name up once; its replay looks up nothing, even once the name stopped answering', async () => {
    const before = ns.queries.length;
    const body = { name: 'replayed', url: 'https://replay.test/hook' };
    ns.answers.set('replay.test', '93.184.215.14');
    const first = await api(app, other).post('/api/webhooks', body, { 'idempotency-key': 'replay-1' });
    assert.equal(first.statusCode, 201, first.body);
    assert.deepEqual(ns.queries.slice(before).map((q) => `${q.name}/${q.type}`).sort(), ['replay.test/1', 'replay.test/28'], 'the preflight and the create share one lookup');

    ns.answers.delete('replay.test');
    const replay = await timed(() => api(app, other).post('/api/webhooks', body, { 'idempotency-key': 'replay-1' }));
    assert.equal(replay.res.statusCode, 201, replay.res.body);
    assert.equal(replay.res.headers['idempotent-replayed'], 'true');
    assert.equal(replay.res.body, first.body);
    assert.equal(ns.queries.length, before + 2, 'the replay looked nothing up');
    assert.ok(replay.ms < 2000, `the replay took ${replay.ms} ms`);
  });
});
