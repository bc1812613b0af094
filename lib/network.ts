import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * Server-side request forgery guard for webhook and tool targets: only public unicast addresses,
 * unless ALLOW_PRIVATE_TARGETS. Checked when a target is written and again before each request.
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

export class TargetNotAllowedError extends Error {}

const LOOKUP_TIMEOUT_MS = 3000;

async function resolveAll(host: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TargetNotAllowedError(`host ${host} did not resolve within ${LOOKUP_TIMEOUT_MS} ms`)), LOOKUP_TIMEOUT_MS);
  });
  try {
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
    return found.map((a) => a.address);
  } catch (err) {
    if (err instanceof TargetNotAllowedError) throw err;
    throw new TargetNotAllowedError(`host ${host} does not resolve`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Refuses a URL whose host is, or resolves to, a non-public address. Returns the resolved addresses.
 * Throws TargetNotAllowedError with a reason fit for a 400 message (and for a stored delivery error).
 */
export async function assertPublicTarget(url: string, allowPrivate: boolean): Promise<string[]> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TargetNotAllowedError('must be an absolute http or https URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TargetNotAllowedError('must be an http or https URL');
  if (allowPrivate) return [];
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) throw new TargetNotAllowedError('must not point at a loopback address');
  const addresses = ipaddr.isValid(host) ? [host] : await resolveAll(host);
  // The message names the host as the user wrote it, never what it resolved to: that would map the
  // internal network (db.internal → 10.x) for whoever asks.
  if (addresses.some(isPrivateAddress)) throw new TargetNotAllowedError(`must not point at a private, loopback or link-local address (${host})`);
  return addresses;
}
