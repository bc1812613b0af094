import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { before, describe, it } from 'node:test';
import { OutboundError, pinnedLookup, sendOutbound } from '../../lib/outbound-http';
import { suiteContext } from '../helpers/cleanup';
import { startNameserver, type TestNameserver } from '../helpers/nameserver';
import { freePort } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';

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

/**
 * Deliveries and tool calls resolve the target with the same resolver as the API's checks (c-ares, the
 * DNS_SERVERS nameservers, never the libuv thread pool) and connect to the addresses they checked.
 */
describe('outbound resolution', () => {
  const suite = suiteContext();
  let ns: TestNameserver;
  let receiver: Receiver;
  let port: string;

  before(async () => {
    ns = await startNameserver(suite, { 'svc.test': '127.0.0.1' });
    receiver = await startReceiver(suite);
    port = new URL(receiver.url).port;
  });

  it('resolves through DNS_SERVERS once and connects to the address it checked', async () => {
    const before = ns.queries.length;
    const res = await sendOutbound({ url: `http://svc.test:${port}/hook`, method: 'POST', body: '{}', timeoutMs: 5000, allowPrivate: true, dnsServers: [ns.address] });
    assert.equal(res.status, 200);
    assert.equal(receiver.requests.at(-1)!.headers.host, `svc.test:${port}`);
    assert.deepEqual(ns.queries.slice(before).map((q) => `${q.name}/${q.type}`).sort(), ['svc.test/1', 'svc.test/28'], 'asked once, no second resolution to connect');
  });

  it('refuses the address it resolved when private targets are not allowed, naming the host only', async () => {
    const err = await sendOutbound({ url: `http://svc.test:${port}/hook`, method: 'POST', timeoutMs: 5000, allowPrivate: false, dnsServers: [ns.address] }).then(
      () => assert.fail('sent'),
      (e: Error) => e,
    );
    assert.equal(err.message, 'target not allowed: must not point at a private, loopback or link-local address (svc.test)');
  });

  it('does not wait out the deadline for an address family that never answers once the other has', async () => {
    ns.answers.set('v4only.test', '127.0.0.1');
    ns.silentAaaa.add('v4only.test');
    const started = performance.now();
    const res = await sendOutbound({ url: `http://v4only.test:${port}/hook`, method: 'GET', timeoutMs: 5000, allowPrivate: true, dnsServers: [ns.address] });
    const ms = Math.round(performance.now() - started);
    console.log(`a name whose AAAA goes unanswered was called after ${ms} ms`);
    assert.equal(res.status, 200);
    assert.ok(ms < 2000, `${ms} ms: the AAAA question was waited out`);
  });

  it('gives up on a name whose nameserver never answers after 3 s', async () => {
    const started = performance.now();
    const err = await sendOutbound({ url: 'http://never.slow.test/hook', method: 'POST', timeoutMs: 15_000, allowPrivate: true, dnsServers: [ns.address] }).then(
      () => assert.fail('sent'),
      (e: Error) => e,
    );
    const ms = Math.round(performance.now() - started);
    console.log(`a never-answering name failed the request after ${ms} ms`);
    assert.ok(err instanceof OutboundError);
    assert.equal(err.message, 'host never.slow.test did not resolve within 3000 ms');
    assert.ok(ms >= 2900 && ms < 8000, `${ms} ms`);
  });
});
