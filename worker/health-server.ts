import http from 'node:http';

/** Why the worker is not ready, or null when it is (every Temporal worker of the process is polling). */
export type Readiness = () => string | null;

/**
 * The worker's health endpoint (WORKER_HEALTH_PORT or --health-port): `GET /health` answers 200 while the
 * process runs (liveness); `GET /ready` 200 only while its Temporal workers are RUNNING, i.e. polling,
 * else 503 `{ ok: false, message }`. Anything else is a 404. Listens on HOST, as the API does.
 */
export async function startHealthServer(options: { port: number; host: string; readiness: Readiness }): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const send = (status: number, body: object) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { message: `Method ${req.method} is not allowed; use GET` });
    if (path === '/health') return send(200, { ok: true });
    if (path === '/ready') {
      const problem = options.readiness();
      return problem === null ? send(200, { ok: true }) : send(503, { ok: false, message: problem });
    }
    return send(404, { message: `${path} not found; GET /health or /ready` });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as { port: number }).port,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
