import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { before, describe, it } from 'node:test';
import { guardedLookup, OutboundError, sendOutbound } from '../../lib/outbound-http';
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
    const err = await sendOutbound({ url: `http://${host}:${closedPort}/hook`, method: 'POST', body: '{}', timeoutMs: 5000, allowPrivate }).then(
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

  it('the connect-time check (against DNS rebinding) names the host only', async () => {
    const err = await new Promise<Error | null>((resolve) => guardedLookup(false)(host, {}, (e) => resolve(e)));
    assert.ok(err);
    assert.match(err.message, new RegExp(`^${host} resolves to a private, loopback or link-local address$`));
    assertNoAddress(err.message);
  });
});
