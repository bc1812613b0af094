import type { FastifyServerOptions } from 'fastify';
import ipaddr from 'ipaddr.js';
import type { TrustProxy } from '../lib/config';

/**
 * Fastify's `trustProxy` for TRUST_PROXY. A hop count is handed over as a function: Fastify 5.12 reads
 * a numeric `trustProxy` as "trust no proxy" (a count cannot check who the peer is), while TRUST_PROXY=n
 * is the operator's statement that every request arrives through n proxies, each appending the address
 * it saw; so the client is the n-th entry from the right and nothing left of it counts.
 */
export function fastifyTrustProxy(setting: TrustProxy): NonNullable<FastifyServerOptions['trustProxy']> {
  if (typeof setting === 'number') return (_address: string, hop: number) => hop < setting;
  return setting;
}

/**
 * Whose budget a client address spends: an IPv4 address itself (an IPv4-mapped IPv6 address is its
 * IPv4 address), an IPv6 address by its /64, the smallest block one subscriber is given, so walking
 * through the addresses of one's own network buys nothing.
 */
export function rateLimitSubject(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (ip.kind() === 'ipv4') return ip.toString();
  const network = new ipaddr.IPv6([...(ip as ipaddr.IPv6).parts.slice(0, 4), 0, 0, 0, 0]);
  return `${network.toString()}/64`;
}
