import { AsyncLocalStorage } from 'node:async_hooks';
import dns from 'node:dns';
import { readFile } from 'node:fs/promises';
import ipaddr from 'ipaddr.js';
import { createFairTurns } from './fair-turns';

/**
 * Server-side request forgery guard for webhook and tool targets: only public unicast addresses,
 * unless ALLOW_PRIVATE_TARGETS. Checked when a target is written and again before each request.
 *
 * Names are resolved with c-ares (`dns.Resolver`), never `dns.lookup`: getaddrinfo holds one of libuv's
 * four threads, shared with scrypt (password hashing) and file I/O, until the system resolver gives up,
 * however soon we stop waiting. A resolver query is a socket on the event loop and is cancelled at the
 * deadline. Names in /etc/hosts are answered from that file first (as getaddrinfo would); `localhost` and
 * `*.localhost` are loopback. Lookups are bounded per request, per account and per process (docs/api.md
 * § URL checks), so one account's names that never answer cannot take the lookups another needs.
 */

/** True for loopback, private, link-local, unique-local, CGNAT, multicast, reserved … anything not public unicast. */
export function isPrivateAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) ip = v6.toIPv4Address();
    // IPv4-compatible ::a.b.c.d (deprecated, never a legitimate public target; ipaddr.js calls it unicast).
    else if (v6.parts.slice(0, 6).every((part) => part === 0)) return true;
  }
  return ip.range() !== 'unicast';
}

/** A target refused: the message is fit for a 400 (after the field's name) and for a stored delivery error. */
export class TargetNotAllowedError extends Error {}

/** No lookup could start: the account (or the whole process) has as many in flight as it may. Passes within seconds. */
export class LookupsBusyError extends Error {
  constructor(
    message: string,
    /** 'account': this account's own lookups fill its share; 'process': every account's together fill the process. */
    readonly scope: 'account' | 'process',
  ) {
    super(message);
  }
}

/** A name that has not resolved within this is refused. */
export const LOOKUP_TIMEOUT_MS = 3000;
/** Lookups one request runs at once (its distinct hosts; the rest wait for these). */
export const LOOKUPS_PER_REQUEST = 8;
/** Lookups one account may have in flight at once, across its requests. */
export const LOOKUPS_PER_ACCOUNT = 16;
/** Lookups the process runs at once, every account together. */
export const LOOKUPS_PER_PROCESS = 128;
/** How long a lookup waits for its other address family once one has answered. */
const OTHER_FAMILY_GRACE_MS = 300;
/** /etc/hosts is read again at most this often. */
const HOSTS_FILE_TTL_MS = 5000;

let hostsFile: { at: number; entries: Promise<Map<string, string[]>> } | null = null;

/** /etc/hosts as name → addresses (lower-case names); an unreadable file is an empty one. */
function hostsEntries(now = Date.now()): Promise<Map<string, string[]>> {
  if (hostsFile && now - hostsFile.at < HOSTS_FILE_TTL_MS) return hostsFile.entries;
  const entries = readFile('/etc/hosts', 'utf8').then(
    (text) => {
      const map = new Map<string, string[]>();
      for (const line of text.split('\n')) {
        const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
        if (!address || !ipaddr.isValid(address)) continue;
        for (const name of names) {
          const key = name.toLowerCase();
          const list = map.get(key) ?? [];
          if (!list.includes(address)) list.push(address);
          map.set(key, list);
        }
      }
      return map;
    },
    () => new Map<string, string[]>(),
  );
  hostsFile = { at: now, entries };
  return entries;
}

/** How long a name that timed out is answered at once with the same refusal, without asking again. */
export const FAILING_NAME_MS = 60_000;
/** Failing names remembered at most (the oldest forgotten first), so a flood of distinct names is bounded. */
const FAILING_NAMES_MAX = 10_000;
/** Names that did not resolve within LOOKUP_TIMEOUT_MS: name (with its nameservers) → until when they are refused at once. */
const failingNames = new Map<string, number>();

function isFailing(key: string, now = Date.now()): boolean {
  const until = failingNames.get(key);
  if (until === undefined) return false;
  if (until > now) return true;
  failingNames.delete(key);
  return false;
}

function rememberFailing(key: string, now = Date.now()): void {
  failingNames.delete(key);
  failingNames.set(key, now + FAILING_NAME_MS);
  while (failingNames.size > FAILING_NAMES_MAX) failingNames.delete(failingNames.keys().next().value!);
}

/**
 * The API's lookups, shared out by account (lib/fair-turns.ts, as the API's requests are): at most
 * LOOKUPS_PER_ACCOUNT each, LOOKUPS_PER_PROCESS in all, waiting at most LOOKUP_TIMEOUT_MS for a turn.
 */
const lookupTurns = createFairTurns({ perAccount: LOOKUPS_PER_ACCOUNT, perProcess: LOOKUPS_PER_PROCESS, waitMs: LOOKUP_TIMEOUT_MS });

/**
 * A slot for one lookup of `accountId`'s request (docs/api.md § URL checks). The engine's own lookups
 * (null: deliveries, tool calls) are not counted here: their own limits bound them (delivery slots, run
 * concurrency), and they must not take the share the API's checks have.
 * An account holds at most LOOKUPS_PER_ACCOUNT. At the process cap, an account with no lookup in flight
 * still gets one (never refused because of others: each account holds at most one beyond the cap), and
 * the others wait for freed slots, served account by account, for at most LOOKUP_TIMEOUT_MS.
 */
async function takeSlot(accountId: string | null, signal?: AbortSignal): Promise<() => void> {
  if (accountId === null) return () => {};
  const turn = await lookupTurns.take(accountId, signal);
  if ('release' in turn) return turn.release;
  if (turn.refused === 'account') {
    throw new LookupsBusyError(`this account has ${LOOKUPS_PER_ACCOUNT} address lookups in progress, the most it may; try again in a few seconds`, 'account');
  }
  if (turn.refused === 'aborted') throw new TargetNotAllowedError('the lookup was stopped');
  throw new LookupsBusyError(`the server is checking as many addresses as it may at once (${LOOKUPS_PER_PROCESS}); try again in a few seconds`, 'process');
}

/** How many lookups are in flight now (for tests and benches). */
export function lookupsInFlight(): { total: number; accounts: number } {
  return lookupTurns.held();
}

export interface ResolveOptions {
  /** Nameservers (`1.1.1.1`, `127.0.0.1:5353`, `[::1]:53`); null: the system's (dns.getServers()). */
  servers: readonly string[] | null;
  /** Whose share of the lookups this one takes; null for the engine's own (deliveries, tool calls). */
  accountId: string | null;
  /** Stops the lookup (and frees its slot) early. */
  signal?: AbortSignal;
}

/** `localhost` and `*.localhost` (RFC 6761: always loopback), lower-case. */
export const isLocalhost = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * Every address of `host` (A and AAAA), without the libuv thread pool. Rejects with TargetNotAllowedError
 * when it does not resolve within LOOKUP_TIMEOUT_MS or does not exist, LookupsBusyError when no slot is free.
 */
export async function resolveHost(host: string, opts: ResolveOptions): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(bare)) return [bare];
  const name = bare.toLowerCase().replace(/\.$/, '');
  const listed = (await hostsEntries()).get(name);
  if (listed) return [...listed];
  if (isLocalhost(name)) return ['127.0.0.1', '::1'];
  if (opts.signal?.aborted) throw new TargetNotAllowedError(`the lookup of ${host} was stopped`);
  const servers = opts.servers ? [...opts.servers] : dns.getServers();
  const failingKey = `${name} ${servers.join(',')}`;
  const timedOut = `host ${host} did not resolve within ${LOOKUP_TIMEOUT_MS} ms`;
  if (isFailing(failingKey)) throw new TargetNotAllowedError(timedOut);

  const release = await takeSlot(opts.accountId, opts.signal);
  const resolver = new dns.promises.Resolver({ timeout: LOOKUP_TIMEOUT_MS, tries: 1 });
  let timer: NodeJS.Timeout | undefined;
  let grace: NodeJS.Timeout | undefined;
  const stop = () => resolver.cancel();
  try {
    resolver.setServers(servers);
    opts.signal?.addEventListener('abort', stop, { once: true });
    const found: string[] = [];
    // Once one family has answered, the other gets a moment more, not the whole deadline: a host whose
    // AAAA query goes unanswered still resolves at once to its A records (and is only connected to those).
    let answered: () => void = () => {};
    const firstAnswer = new Promise<'answered'>((resolve) => {
      answered = () => {
        grace ??= setTimeout(() => resolve('answered'), OTHER_FAMILY_GRACE_MS);
      };
    });
    const family = (query: Promise<string[]>) =>
      query.then((list) => {
        found.push(...list);
        if (list.length > 0) answered();
      });
    const families = Promise.allSettled([family(resolver.resolve4(name)), family(resolver.resolve6(name))]);
    const deadline = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), LOOKUP_TIMEOUT_MS);
    });
    const outcome = await Promise.race([families, deadline, firstAnswer]);
    if (found.length > 0) return found;
    if (opts.signal?.aborted) throw new TargetNotAllowedError(`the lookup of ${host} was stopped`);
    if (outcome === 'late' || outcome === 'answered' || outcome.some((r) => r.status === 'rejected' && /ETIMEOUT|ECANCELLED/.test(String((r.reason as { code?: string }).code)))) {
      // Asked again within FAILING_NAME_MS, the name is refused at once, without a slot or a query.
      rememberFailing(failingKey);
      throw new TargetNotAllowedError(timedOut);
    }
    throw new TargetNotAllowedError(`host ${host} does not resolve`);
  } finally {
    clearTimeout(timer);
    clearTimeout(grace);
    opts.signal?.removeEventListener('abort', stop);
    resolver.cancel();
    release();
  }
}

/**
 * The URL as a target: an absolute http(s) URL without credentials in it. `legacy` lets credentials
 * through: a target stored before they were refused is still called as it was.
 */
export function parseTarget(url: string, legacy = false): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TargetNotAllowedError('must be an absolute http or https URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TargetNotAllowedError('must be an http or https URL');
  if (!legacy && (parsed.username !== '' || parsed.password !== '')) {
    throw new TargetNotAllowedError('must not contain credentials (user:password@); send them in a header');
  }
  return parsed;
}

/** The URL's host as the resolver takes it (brackets off an IPv6 literal). */
export const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Refuses addresses that are not public (unless allowed); `host` is named as written, never what it resolved to. */
export function assertPublicAddresses(host: string, addresses: readonly string[], allowPrivate: boolean): void {
  if (allowPrivate) return;
  // The message names the host as the user wrote it, never what it resolved to: that would map the
  // internal network (db.internal → 10.x) for whoever asks.
  if (addresses.some(isPrivateAddress)) throw new TargetNotAllowedError(`must not point at a private, loopback or link-local address (${host})`);
}

export interface TargetCheckOptions {
  allowPrivate: boolean;
  servers: readonly string[] | null;
  accountId: string | null;
}

/** A URL to check and the request field it came from (`body.url`, `body.tools.3.configJson.endpoint`). */
export interface Target {
  url: string;
  field: string;
}

/** A target refused, with the field it came from. */
export class TargetCheckError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

/** The targets a request has already had checked (its preflight's), by URL. */
const checkedThisRequest = new AsyncLocalStorage<Map<string, Promise<void>>>();

/**
 * Runs `fn` with a record of the targets checked in it: a target checked once (by a route's preflight,
 * before the request's write unit takes a database connection) is not looked up again by the service it
 * calls. Nested calls share the outer record.
 */
export function withCheckedTargets<T>(fn: () => T): T {
  if (checkedThisRequest.getStore()) return fn();
  return checkedThisRequest.run(new Map(), fn);
}

/**
 * Checks a request's targets: every URL's form first (no lookup for a request with a bad one), then each
 * distinct host once, LOOKUPS_PER_REQUEST at a time within the account's and the process's share. The first
 * refusal stops the rest and is thrown as TargetCheckError naming its field; LookupsBusyError when no
 * lookup may start.
 */
export async function checkTargets(targets: readonly Target[], opts: TargetCheckOptions): Promise<void> {
  const memo = checkedThisRequest.getStore();
  const pending: Target[] = [];
  const waits: Promise<void>[] = [];
  for (const target of targets) {
    const known = memo?.get(target.url);
    if (known) waits.push(known);
    else pending.push(target);
  }
  const byHost = new Map<string, { fields: Target[]; url: URL }>();
  for (const target of pending) {
    let url: URL;
    try {
      url = parseTarget(target.url);
    } catch (err) {
      throw new TargetCheckError(target.field, (err as Error).message);
    }
    if (opts.allowPrivate) continue;
    const host = hostOf(url).toLowerCase();
    if (isLocalhost(host)) throw new TargetCheckError(target.field, 'must not point at a loopback address');
    const entry = byHost.get(host) ?? { fields: [], url };
    entry.fields.push(target);
    byHost.set(host, entry);
  }

  const stop = new AbortController();
  const hosts = [...byHost.entries()];
  let next = 0;
  const lookUp = async (): Promise<void> => {
    while (next < hosts.length && !stop.signal.aborted) {
      const [, { fields, url }] = hosts[next++]!;
      const host = hostOf(url);
      try {
        assertPublicAddresses(host, await resolveHost(host, { ...opts, signal: stop.signal }), false);
      } catch (err) {
        stop.abort();
        throw err instanceof TargetNotAllowedError ? new TargetCheckError(fields[0]!.field, err.message) : err;
      }
    }
  };
  const work = Promise.all([...waits, ...Array.from({ length: Math.min(LOOKUPS_PER_REQUEST, hosts.length) }, lookUp)]).then(() => undefined);
  // Only a success is remembered: a refused target is checked again if the request asks again.
  if (memo) for (const target of pending) memo.set(target.url, work);
  try {
    await work;
  } catch (err) {
    if (memo) for (const target of pending) memo.delete(target.url);
    // The first refusal is the answer; the others were stopped by it.
    throw err;
  }
}
