import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LookupsBusyError, lookupsInFlight, LOOKUPS_PER_ACCOUNT, LOOKUPS_PER_PROCESS, resolveHost } from '../../lib/network';
import { suiteContext } from '../helpers/cleanup';
import { startNameserver } from '../helpers/nameserver';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * docs/api.md § URL checks, the process's share: with every one of its LOOKUPS_PER_PROCESS slots taken by
 * names that never answer (under .slow.test, from a loopback nameserver), an account with none in flight
 * is served at once, and an account with some waits its turn for a freed slot instead of being refused.
 */
describe('lookup slots at the process cap', () => {
  const suite = suiteContext();

  it('an account with no lookup in flight is served at once; one with some waits for a freed slot, not refused', async () => {
    const ns = await startNameserver(suite, { 'ok.test': '93.184.215.14' });
    const servers = [ns.address];
    const full = LOOKUPS_PER_PROCESS / LOOKUPS_PER_ACCOUNT - 1;
    const flood: Promise<unknown>[] = [];
    const slow = (name: string, accountId: string) => flood.push(resolveHost(name, { servers, accountId }).catch((e: unknown) => e));
    // `full` accounts with their whole share, one with all of its share but one, one with a single lookup.
    for (let a = 0; a < full; a++) for (let i = 0; i < LOOKUPS_PER_ACCOUNT; i++) slow(`slots-${a}-${i}.slow.test`, `flooder-${a}`);
    for (let i = 0; i < LOOKUPS_PER_ACCOUNT - 1; i++) slow(`slots-p-${i}.slow.test`, 'partial');
    slow('slots-one.slow.test', 'one');
    // The loopback nameserver's socket takes the flood's 256 questions in first (its receive buffer is small).
    await sleep(300);
    assert.equal(lookupsInFlight().total, LOOKUPS_PER_PROCESS);

    // A new account: served beyond the cap, at once.
    assert.deepEqual(await resolveHost('ok.test', { servers, accountId: 'newcomer' }), ['93.184.215.14']);
    // Accounts with lookups in flight wait for freed slots (the flood's end, after 3 s), then resolve.
    const waiting = [resolveHost('ok.test', { servers, accountId: 'partial' }), resolveHost('ok.test', { servers, accountId: 'one' })];
    await sleep(100);
    assert.equal(ns.asked('ok.test').length, 2, 'only the newcomer has asked so far');
    for (const answer of await Promise.all(waiting)) assert.deepEqual(answer, ['93.184.215.14']);
    const ended = await Promise.all(flood);
    assert.ok(ended.every((e) => e instanceof Error && !(e instanceof LookupsBusyError)), 'the flood timed out');
    assert.equal(lookupsInFlight().total, 0);
  });
});
