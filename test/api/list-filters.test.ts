import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { api } from '../helpers/api';
import { readAllPages, registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { testNamespace } from '../helpers/namespace';

/**
 * What the console's lists ask of the API: agents found by a text and a status (GET /api/agents?q=&status=),
 * and the runs of every agent of the account (GET /api/runs?agentId=&status=), paged with the filters kept.
 */
describe('list filters: agents by text and status, runs across agents', () => {
  const suite = suiteContext();
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;
  const ids: Record<string, string> = {};

  before(async () => {
    // No worker polls this namespace: the runs stay queued, which is all these lists need.
    ({ app } = await startTestApp(suite, { TEMPORAL_NAMESPACE: testNamespace(__filename), INITIAL_BALANCE: '100000' }));
    owner = await registerUser(app);
    other = await registerUser(app);
    const agents: Array<[string, string, string]> = [
      ['Price watcher', 'Tracks coin prices', 'active'],
      ['price alerts', 'Sends alerts', 'draft'],
      ['Support bot', 'Answers about PRICES and plans', 'paused'],
      ['Greeter', 'Says hello', 'active'],
      ['50% off finder', 'Finds_deals', 'template'],
    ];
    for (const [name, description, status] of agents) {
      ids[name] = (await api(app, owner).ok('POST', '/api/agents', { name, description, status })).id;
    }
    // Another account's agent with a matching name is never listed.
    await api(app, other).ok('POST', '/api/agents', { name: 'Price watcher (other account)' });
  });

  const names = async (query: string) => (await api(app, owner).ok<{ name: string }[]>('GET', `/api/agents${query}`)).map((a) => a.name).sort();

  it('q finds a text in the name or the description, in any case, as plain text', async () => {
    assert.deepEqual(await names('?q=price'), ['Price watcher', 'Support bot', 'price alerts']);
    assert.deepEqual(await names('?q=HELLO'), ['Greeter']);
    // % and _ are characters, not patterns.
    assert.deepEqual(await names('?q=50%25'), ['50% off finder']);
    assert.deepEqual(await names('?q=_'), ['50% off finder']);
    assert.deepEqual(await names('?q=nothing-matches'), []);
  });

  it('status keeps one status, and combines with q', async () => {
    assert.deepEqual(await names('?status=active'), ['Greeter', 'Price watcher']);
    assert.deepEqual(await names('?status=active&q=price'), ['Price watcher']);
    const bad = await api(app, owner).get('/api/agents?status=sleeping');
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /^querystring\.status: /);
    const long = await api(app, owner).get(`/api/agents?q=${'x'.repeat(201)}`);
    assert.equal(long.statusCode, 400);
    assert.match(long.json().message, /^querystring\.q: /);
  });

  it('pages of a filtered list keep the filter in the Link header', async () => {
    const all = await readAllPages(app, owner, '/api/agents?q=price&limit=1');
    assert.equal(all.pages, 3);
    assert.deepEqual(all.items.map((a) => (a as unknown as { name: string }).name).sort(), ['Price watcher', 'Support bot', 'price alerts']);
    for (const link of all.links) assert.equal(link.searchParams.get('q'), 'price');
  });

  it('GET /api/runs lists the runs of every agent of the account, by agent and by status', async () => {
    const runs: string[] = [];
    for (const name of ['Price watcher', 'Greeter', 'Greeter']) {
      const run = await api(app, owner).ok('POST', `/api/agents/${ids[name]}/runs`, { input: `hi ${name}` });
      runs.push(run.id);
    }
    const otherAgent = (await api(app, other).ok<{ id: string }[]>('GET', '/api/agents'))[0]!;
    await api(app, other).ok('POST', `/api/agents/${otherAgent.id}/runs`, { input: 'not yours' });

    const listed = await api(app, owner).ok<{ id: string; agentId: string; status: string }[]>('GET', '/api/runs');
    assert.deepEqual(listed.map((r) => r.id), [...runs].reverse(), 'newest first, only this account\'s');
    const greeter = await api(app, owner).ok<{ agentId: string }[]>('GET', `/api/runs?agentId=${ids.Greeter}`);
    assert.equal(greeter.length, 2);
    assert.ok(greeter.every((r) => r.agentId === ids.Greeter));
    assert.equal((await api(app, owner).ok<unknown[]>('GET', '/api/runs?status=queued')).length + (await api(app, owner).ok<unknown[]>('GET', '/api/runs?status=running')).length, 3);
    assert.deepEqual(await api(app, owner).ok('GET', '/api/runs?status=succeeded'), []);
    // Another account's agent filters to nothing, never to its runs.
    assert.deepEqual(await api(app, owner).ok('GET', `/api/runs?agentId=${otherAgent.id}`), []);
    assert.equal((await api(app, owner).get('/api/runs?agentId=not-a-uuid')).statusCode, 400);
    const paged = await readAllPages(app, owner, `/api/runs?agentId=${ids.Greeter}&limit=1`);
    assert.equal(paged.pages, 2);
    for (const link of paged.links) assert.equal(link.searchParams.get('agentId'), ids.Greeter);
  });
});
