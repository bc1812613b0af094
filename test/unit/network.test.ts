import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import {
  checkTargets, isPrivateAddress, LOOKUPS_PER_ACCOUNT, LOOKUPS_PER_PROCESS, lookupsInFlight, LookupsBusyError, resolveHost, TargetCheckError,
} from '../../lib/network';
import { suiteContext } from '../helpers/cleanup';
import { startNameserver } from '../helpers/nameserver';

/** Private targets refused (production) or allowed (the dev stack and tests); the system's nameservers. */
const strict = { allowPrivate: false, servers: null, accountId: null };
const open = { ...strict, allowPrivate: true };
/** One URL checked as a request's field `url`. */
const check = (url: string, opts: typeof strict) => checkTargets([{ url, field: 'url' }], opts);

describe('SSRF target check', () => {
  it('classifies addresses', () => {
    for (const ip of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fc00::1', '::ffff:127.0.0.1', '::7f00:1', '::127.0.0.1', '224.0.0.1', 'not-an-ip']) {
      assert.ok(isPrivateAddress(ip), ip);
    }
    for (const ip of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111']) assert.ok(!isPrivateAddress(ip), ip);
  });

  it('refuses private literals, localhost names and odd spellings of loopback', async () => {
    for (const url of ['http://127.0.0.1:9/x', 'http://localhost/', 'http://api.localhost/', 'http://[::1]/', 'http://[fe80::1]/', 'http://0x7f000001/', 'http://2130706433/', 'http://10.1.2.3/', 'http://[::ffff:7f00:1]/', 'http://[::127.0.0.1]:8080/', 'http://[::7f00:1]/']) {
      await assert.rejects(check(url, strict), TargetCheckError, url);
    }
  });

  it('refuses non-http schemes even when private targets are allowed', async () => {
    await assert.rejects(check('ftp://example.com/x', open), /http or https/);
    await assert.rejects(check('file:///etc/passwd', strict), /http or https/);
    await assert.rejects(check('not a url', open), TargetCheckError);
  });

  it('accepts public literals, and anything when private targets are allowed', async () => {
    await check('https://93.184.215.14/hook', strict);
    await check('http://127.0.0.1:8080/', open);
    await check('http://db.internal.invalid:8080/', open); // nothing is resolved when private targets are allowed
  });

  it('refuses a name that does not resolve', async () => {
    await assert.rejects(check('https://no-such-host.invalid/', strict), /does not resolve|did not resolve/);
  });

  it('names the host as written, never the address it resolved to (no internal DNS in a 400)', async () => {
    // The machine's own name resolves (through /etc/hosts) to a loopback or private address, like db.internal → 10.x.
    const host = new URL(`http://${hostname()}/`).hostname;
    const addresses = (await lookup(host, { all: true })).map((a) => a.address);
    assert.ok(host !== 'localhost' && addresses.length > 0 && addresses.every(isPrivateAddress), `${host} resolves to ${addresses.join(', ')}`);
    await assert.rejects(check(`http://${host}:8080/hook`, strict), (err: Error) => {
      assert.equal(err.message, `url: must not point at a private, loopback or link-local address (${host})`);
      return true;
    });
  });
});

describe('lookup bounds', () => {
  const suite = suiteContext();

  it('bounds lookups per account and per process, and frees each slot when its lookup stops', async () => {
    const ns = await startNameserver(suite);
    const stop = new AbortController();
    const lookup = (account: string, i: number) =>
      resolveHost(`${account}-${i}.slow.test`, { servers: [ns.address], accountId: account, signal: stop.signal }).then(
        () => 'resolved',
        (err: Error) => err,
      );
    const accounts = LOOKUPS_PER_PROCESS / LOOKUPS_PER_ACCOUNT;
    const running = Array.from({ length: LOOKUPS_PER_PROCESS }, (_, i) => lookup(`a${i % accounts}`, i));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(lookupsInFlight(), { total: LOOKUPS_PER_PROCESS, accounts });

    // An account whose own share is in flight is refused at once; one with some (not all) of it in flight
    // would wait its turn for a freed slot (test/unit/lookup-slots.test.ts). One with none in flight is never
    // refused because of others: it gets one more than the process's cap.
    const ownShare = await lookup('a0', -1);
    assert.ok(ownShare instanceof LookupsBusyError && ownShare.scope === 'account', String(ownShare));
    const newcomer = lookup('newcomer', 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(lookupsInFlight(), { total: LOOKUPS_PER_PROCESS + 1, accounts: accounts + 1 });
    // The engine's own lookups (no account) are not counted against the API's share.
    const engine = resolveHost('engine.slow.test', { servers: [ns.address], accountId: null, signal: stop.signal }).catch((err: Error) => err);

    stop.abort();
    for (const result of await Promise.all([...running, newcomer])) assert.match(String(result), /the lookup of .* was stopped/);
    assert.match(String(await engine), /was stopped/);
    assert.deepEqual(lookupsInFlight(), { total: 0, accounts: 0 });

    // With room in the process, an account's own share is the bound.
    const again = new AbortController();
    const mine = Array.from({ length: LOOKUPS_PER_ACCOUNT }, (_, i) =>
      resolveHost(`mine-${i}.slow.test`, { servers: [ns.address], accountId: 'mine', signal: again.signal }).catch((err: Error) => err),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const over = await resolveHost('mine-over.slow.test', { servers: [ns.address], accountId: 'mine' }).catch((err: Error) => err);
    assert.ok(over instanceof LookupsBusyError && over.scope === 'account', String(over));
    assert.equal(ns.asked('mine-over.slow.test').length, 0, 'refused before asking');
    again.abort();
    await Promise.all(mine);
    assert.deepEqual(lookupsInFlight(), { total: 0, accounts: 0 });
  });
});
