import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lookupsInFlight, LOOKUPS_PER_ACCOUNT, LOOKUPS_PER_PROCESS } from '../../lib/network';
import { api } from '../helpers/api';
import { registerUser, startTestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';
import { startNameserver } from '../helpers/nameserver';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * docs/api.md § URL checks: the process's lookups are a share no account can use up. Names under .slow.test
 * are never answered by the loopback nameserver (DNS_SERVERS): eight accounts, each with its whole share of
 * lookups in flight, fill the process's; a ninth account's write still looks its name up and succeeds, and a
 * name that timed out is refused at once for a minute, without a query.
 */
describe('lookup fairness', () => {
  const suite = suiteContext();

  it(`eight accounts holding all ${LOOKUPS_PER_PROCESS} lookups leave a ninth account's webhook write its own; a timed-out name is refused at once`, async () => {
    const ns = await startNameserver(suite, { 'ok.test': '93.184.215.14' });
    const { app } = await startTestApp(suite, { DNS_SERVERS: ns.address, ALLOW_PRIVATE_TARGETS: 'false' });
    const flooders = LOOKUPS_PER_PROCESS / LOOKUPS_PER_ACCOUNT;
    const attackers = [];
    for (let i = 0; i < flooders; i++) attackers.push(await registerUser(app));
    const victim = await registerUser(app);

    const floods = attackers.flatMap((attacker, a) =>
      Array.from({ length: LOOKUPS_PER_ACCOUNT }, (_, i) => api(app, attacker).post('/api/webhooks', { name: `f${i}`, url: `https://flood-${a}-${i}.slow.test/x` })),
    );
    const started = Date.now();
    while (lookupsInFlight().total < LOOKUPS_PER_PROCESS) {
      if (Date.now() - started > 2_500) assert.fail(`only ${lookupsInFlight().total} lookups in flight`);
      await sleep(10);
    }
    const mine = await api(app, victim).post('/api/webhooks', { name: 'mine', url: 'https://ok.test/hook' });
    assert.equal(mine.statusCode, 201, mine.body);
    assert.deepEqual(ns.asked('ok.test').map((q) => q.type).sort(), [1, 28]);

    for (const res of await Promise.all(floods)) {
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().message, /^body\.url: host flood-\d-\d+\.slow\.test did not resolve within 3000 ms$/);
    }
    // Remembered as failing: the same answer at once, and the nameserver is not asked again.
    const asked = ns.asked('flood-0-0.slow.test').length;
    const again = await api(app, attackers[0]!).post('/api/webhooks', { name: 'again', url: 'https://flood-0-0.slow.test/x' });
    assert.equal(again.statusCode, 400, again.body);
    assert.deepEqual(again.json(), { message: 'body.url: host flood-0-0.slow.test did not resolve within 3000 ms' });
    assert.equal(ns.asked('flood-0-0.slow.test').length, asked);
    assert.equal(lookupsInFlight().total, 0);
  });
});
