import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { before, describe, it } from 'node:test';
import { OutboundError, pinnedLookup, sendOutbound } from '../../lib/outbound-http';
import { freePort } from '../helpers/processes';

/**
 * What sendOutbound reports is stored (a delivery's lastError, a tool's error in a run's output) and shown
 * to the account: it names the host the user wrote, never the address it resolved to (internal DNS).
 */
describe('outbound errors', () => {
  // The machine's own name resolves (through /etc/hosts) to a loopback or private address.
  const host = new URL(`http://${hostname()}/`).hostname;
  let addresses: string[];
  let closedPort: number;

  before(async () => {
    addresses = (await lookup(host, { all: true })).map((a) => a.address);
    assert.ok(addresses.length > 0 && !addresses.includes(host), `${host} resolves to ${addresses.join(', ')}`);
    closedPort = await freePort('0.0.0.0'); // nothing listens there
  });

  const failure = async (allowPrivate: boolean): Promise<string> => {
    const err = await sendOutbound({ url: `http://${host}:${closedPort}/hook`, method: 'POST', body: '{}', timeoutMs: 5000, allowPrivate, dnsServers: null }).then(
      () => assert.fail('the request succeeded'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof OutboundError, String(err));
    return err.message;
  };
  const assertNoAddress = (message: string) => {
    for (const address of addresses) assert.ok(!message.includes(address), `"${message}" shows ${address}`);
  };

  it('a refused target names the host only', async () => {
    const message = await failure(false);
    assert.match(message, new RegExp(`^target not allowed: .*\\(${host}\\)$`));
    assertNoAddress(message);
  });

  it('a refused connection names the host and port, not the address', async () => {
    const message = await failure(true);
    assert.match(message, /ECONNREFUSED/);
    assert.ok(message.includes(`${host}:${closedPort}`), message);
    assertNoAddress(message);
  });

  it('the socket connects only to the addresses that were checked (no second resolution: DNS rebinding)', async () => {
    const lookup = pinnedLookup(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    const one = await new Promise<[Error | null, string, number]>((resolve) => lookup(host, {}, (e, a, f) => resolve([e, a as string, f!])));
    assert.deepEqual(one, [null, '93.184.215.14', 4]);
    const v6 = await new Promise<string>((resolve) => lookup(host, { family: 6 }, (_e, a) => resolve(a as string)));
    assert.equal(v6, '2606:2800:21f:cb07:6820:80da:af6b:8b2c');
    const all = await new Promise<unknown>((resolve) => lookup(host, { all: true }, (_e, a) => resolve(a)));
    assert.deepEqual(all, [{ address: '93.184.215.14', family: 4 }, { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 }]);
  });
});
