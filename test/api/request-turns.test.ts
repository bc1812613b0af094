import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lookupsInFlight } from '../../lib/network';
import { api } from '../helpers/api';
import { registerUser, startTestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startNameserver } from '../helpers/nameserver';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function untilLookups(n: number): Promise<void> {
  const started = Date.now();
  while (lookupsInFlight().total < n) {
    if (Date.now() - started > 2_500) assert.fail(`only ${lookupsInFlight().total} lookups in flight, waiting for ${n}`);
    await sleep(10);
  }
}

/**
 * docs/api.md § Requests in progress: an account's share of an API process's requests in progress. Requests held in progress
 * are webhook writes whose URL's name is never answered by the loopback nameserver (3 s each).
 */
describe('request turns: one account cannot take the process from another', () => {
  const suite = suiteContext();

  it('an account at its share is refused at once with 429 and Retry-After; at the process cap an account with none in progress is served, another waits its turn', async () => {
    const ns = await startNameserver(suite);
    const { app } = await startTestApp(suite, {
      DNS_SERVERS: ns.address,
      ALLOW_PRIVATE_TARGETS: 'false',
      REQUESTS_IN_FLIGHT_PER_ACCOUNT: '2',
      REQUESTS_IN_FLIGHT_PER_PROCESS: '3',
      REQUESTS_TURN_WAIT_MS: '10000',
    });
    const [attacker, second, victim] = [await registerUser(app), await registerUser(app), await registerUser(app)];
    const slow = (who: typeof attacker, i: number) => api(app, who).post('/api/webhooks', { name: `slow ${i}`, url: `https://held-${i}.slow.test/x` });

    const held = [slow(attacker, 0), slow(attacker, 1)];
    await untilLookups(2);
    const over = await api(app, attacker).get('/api/agents');
    assert.equal(over.statusCode, 429, over.body);
    assert.equal(over.headers['retry-after'], '1');
    assert.equal(
      over.json().message,
      'this account has 2 requests in progress in this API process, the most it may (REQUESTS_IN_FLIGHT_PER_ACCOUNT); try again in 1 s',
    );
    const mine = await api(app, victim).get('/api/agents');
    assert.equal(mine.statusCode, 200, mine.body);

    // The process's three turns taken: the second account's next request waits; the victim, with none, is served.
    held.push(slow(second, 2));
    await untilLookups(3);
    let waited: { statusCode: number; body: string } | undefined;
    const waiting = api(app, second)
      .get('/api/agents')
      .then((res) => (waited = res));
    await sleep(200);
    assert.equal(waited, undefined, 'the second account waits for a turn');
    const served = await api(app, victim).get('/api/agents');
    assert.equal(served.statusCode, 200, served.body);
    assert.equal(waited, undefined, 'still waiting while the victim was served');

    for (const res of await Promise.all(held)) assert.equal(res.statusCode, 400, res.body);
    await waiting;
    assert.equal(waited!.statusCode, 200, waited!.body);
    assert.equal((await api(app, attacker).get('/api/agents')).statusCode, 200, 'turns given back once answered');
  });
});
