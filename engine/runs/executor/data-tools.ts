import type { Config } from '../../../lib/config';
import { toolRequest } from './http';

/**
 * The data tools call public APIs at base URLs from operator config (COINGECKO_BASE_URL,
 * DEXSCREENER_BASE_URL, POLYMARKET_BASE_URL; tests point them at loopback fixtures), so they are
 * called with private targets allowed: the address is the operator's choice, not a user's.
 */
type Tools = Config['tools'] & Pick<Config['network'], 'dnsServers'>;

const get = (url: string, tools: Tools, signal?: AbortSignal) => toolRequest({ url, method: 'GET', timeoutMs: tools.timeoutMs, allowPrivate: true, dnsServers: tools.dnsServers, signal });

/** coin_prices → CoinGecko `/simple/price`: `{ "<coinId>": { "usd": <price> }, … }`. */
export function coinPrices(config: { coinIds: string[] }, tools: Tools, signal?: AbortSignal): Promise<unknown> {
  const query = new URLSearchParams({ ids: config.coinIds.join(','), vs_currencies: 'usd' });
  return get(`${tools.coinGeckoBaseUrl}/simple/price?${query}`, tools, signal);
}

/** DexScreener answers at most this many pair addresses per request. */
const DEX_PAIRS_PER_REQUEST = 30;

/**
 * dex_pairs → DexScreener `/latest/dex/pairs/<chainId>/<addresses,>` per chain (in requests of up to
 * 30 addresses): `{ "<chainId>": { pairs: [ … ] }, … }`. Any request failing fails the tool.
 */
export async function dexPairs(config: { chainIds: string[]; pairAddresses: string[] }, tools: Tools, signal?: AbortSignal): Promise<unknown> {
  if (config.pairAddresses.length === 0) throw new Error('no pairAddresses configured: there is nothing to look up');
  const result: Record<string, { pairs: unknown[] }> = {};
  for (const chainId of config.chainIds) {
    const pairs: unknown[] = [];
    for (let i = 0; i < config.pairAddresses.length; i += DEX_PAIRS_PER_REQUEST) {
      const addresses = config.pairAddresses.slice(i, i + DEX_PAIRS_PER_REQUEST).map(encodeURIComponent).join(',');
      const body = (await get(`${tools.dexScreenerBaseUrl}/latest/dex/pairs/${encodeURIComponent(chainId)}/${addresses}`, tools, signal)) as {
        pairs?: unknown;
        pair?: unknown;
      } | null;
      if (Array.isArray(body?.pairs)) pairs.push(...body.pairs);
      else if (body?.pair) pairs.push(body.pair);
    }
    result[chainId] = { pairs };
  }
  return result;
}

/** prediction_markets → Polymarket Gamma `/markets?id=<id>&id=<id>`: the array of markets. */
export function predictionMarkets(config: { marketIds: string[] }, tools: Tools, signal?: AbortSignal): Promise<unknown> {
  const query = new URLSearchParams(config.marketIds.map((id): [string, string] => ['id', id]));
  return get(`${tools.polymarketBaseUrl}/markets?${query}`, tools, signal);
}
