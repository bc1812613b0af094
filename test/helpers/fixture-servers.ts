import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FixtureRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Set when the client closed the connection before the answer was sent (an aborted call). */
  aborted?: boolean;
}

export interface FixtureAnswer {
  status?: number;
  /** Sent as JSON unless it is a string (sent as text). */
  body?: unknown;
  delayMs?: number;
}

export interface FixtureServer {
  /** http://127.0.0.1:<port> (no trailing slash). */
  url: string;
  requests: FixtureRequest[];
  close: () => Promise<void>;
}

/**
 * A JSON HTTP server on loopback for the tools a run calls: every request is recorded, `answer`
 * decides each response (default 200 with `{}`).
 */
export async function startFixtureServer(answer: (req: FixtureRequest) => FixtureAnswer = () => ({})): Promise<FixtureServer> {
  const requests: FixtureRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: FixtureRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      res.on('close', () => {
        if (!res.writableEnded) request.aborted = true;
      });
      const a = answer(request);
      const text = typeof a.body === 'string' ? a.body : JSON.stringify(a.body ?? {});
      const type = typeof a.body === 'string' ? 'text/plain' : 'application/json';
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(a.status ?? 200, { 'content-type': type }).end(text);
      }, a.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Deterministic fake prices and markets the data-tool fixtures answer with. */
export const fakeUsdPrice = (coinId: string) => coinId.length * 1000;

/**
 * Stand-ins for CoinGecko (`/api/v3/simple/price`), DexScreener (`/latest/dex/pairs/<chain>/<pairs>`)
 * and Polymarket Gamma (`/markets?id=…`), answering the shapes the real APIs answer. `env` holds the
 * base-URL overrides to start the engine with.
 */
export async function startDataFixtures() {
  const coinGecko = await startFixtureServer((req) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname !== '/api/v3/simple/price') return { status: 404, body: { error: 'not found' } };
    const ids = (url.searchParams.get('ids') ?? '').split(',').filter(Boolean);
    return { body: Object.fromEntries(ids.map((id) => [id, { usd: fakeUsdPrice(id) }])) };
  });
  const dexScreener = await startFixtureServer((req) => {
    const m = /^\/latest\/dex\/pairs\/([^/]+)\/([^/?]+)$/.exec(req.url);
    if (!m) return { status: 404, body: { error: 'not found' } };
    const chainId = decodeURIComponent(m[1]!);
    const pairs = m[2]!.split(',').map((a) => ({ chainId, pairAddress: decodeURIComponent(a), priceUsd: '1.5' }));
    return { body: { schemaVersion: '1.0.0', pairs } };
  });
  const polymarket = await startFixtureServer((req) => {
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
    close: async () => {
      await Promise.all([coinGecko.close(), dexScreener.close(), polymarket.close()]);
    },
  };
}
