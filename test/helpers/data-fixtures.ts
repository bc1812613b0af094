import type { Cleanup } from './cleanup';
import { startReceiver } from './receiver';

/** Deterministic fake prices and markets the data-tool fixtures answer with. */
export const fakeUsdPrice = (coinId: string) => coinId.length * 1000;

/**
 * Stand-ins for CoinGecko (`/api/v3/simple/price`), DexScreener (`/latest/dex/pairs/<chain>/<pairs>`)
 * and Polymarket Gamma (`/markets?id=…`), answering the shapes the real APIs answer; closed when `t`
 * ends. `env` holds the base-URL overrides to start the engine with.
 */
export async function startDataFixtures(t: Cleanup) {
  const coinGecko = await startReceiver(t, (req) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname !== '/api/v3/simple/price') return { status: 404, body: { error: 'not found' } };
    const ids = (url.searchParams.get('ids') ?? '').split(',').filter(Boolean);
    return { body: Object.fromEntries(ids.map((id) => [id, { usd: fakeUsdPrice(id) }])) };
  });
  const dexScreener = await startReceiver(t, (req) => {
    const m = /^\/latest\/dex\/pairs\/([^/]+)\/([^/?]+)$/.exec(req.url);
    if (!m) return { status: 404, body: { error: 'not found' } };
    const chainId = decodeURIComponent(m[1]!);
    const pairs = m[2]!.split(',').map((a) => ({ chainId, pairAddress: decodeURIComponent(a), priceUsd: '1.5' }));
    return { body: { schemaVersion: '1.0.0', pairs } };
  });
  const polymarket = await startReceiver(t, (req) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname !== '/markets') return { status: 404, body: { error: 'not found' } };
    return { body: url.searchParams.getAll('id').map((id) => ({ id, question: `Will market ${id} resolve yes?` })) };
  });
  return {
    coinGecko,
    dexScreener,
    polymarket,
    env: {
      COINGECKO_BASE_URL: `${coinGecko.url}/api/v3`,
      DEXSCREENER_BASE_URL: dexScreener.url,
      POLYMARKET_BASE_URL: polymarket.url,
    },
  };
}
