import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { errorResponse } from '../schemas/common';
import type { MetricsService } from '../services/metrics-service';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Every response is counted and timed by method, route pattern and status (docs/operations.md § Metrics).
 * Added before any route is registered, so that every route inherits the hook.
 */
export function measureRequests(app: FastifyInstance, metrics: MetricsService): void {
  app.addHook('onResponse', (request, reply, done) => {
    // The route's pattern (`/api/agents/:id`), never the URL: one series per route, whatever the ids.
    metrics.observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/**
 * `GET /metrics`: the Prometheus exposition text. With METRICS_TOKEN set it asks for
 * `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time, SHA-256 digests of both); without, it
 * is open, which the API allows only on a loopback HOST (api/server.ts refuses to start otherwise).
 */
export function metricsRoute(app: FastifyInstance, deps: { metrics: MetricsService; token: string | null }): void {
  const { metrics } = deps;
  const expected = deps.token === null ? null : digest(`Bearer ${deps.token}`);

  app.get(
    '/metrics',
    {
      config: { public: true },
      schema: {
        tags: ['operations'],
        summary: 'Prometheus metrics',
        description:
          'The Prometheus text format (0.0.4). This API process: agent_platform_http_requests_total and ' +
          'agent_platform_http_request_duration_seconds by method, route pattern and status, and Node\'s process metrics. ' +
          'The engine, the same on every API instance (read from Postgres at most once per METRICS_SNAPSHOT_MS, 5 s, per process ' +
          'however many scrape: a scrape shows a snapshot at most that old): fires by source and status, ' +
          'schedule fire lag, deliveries by outcome, delivery attempts and their latency, runs finished and queued/running, ' +
          'the outbox\'s rows and oldest age, the reconciler\'s corrections, missed fires (docs/operations.md § Metrics). ' +
          'Outside /api, where Prometheus looks by default. With METRICS_TOKEN set (required when the API listens on an address ' +
          'other than loopback), send Authorization: Bearer <METRICS_TOKEN>.',
        response: {
          200: { description: 'The metrics, as text/plain; version=0.0.4', content: { 'text/plain': { schema: z.string() } } },
          401: errorResponse('METRICS_TOKEN is set and the request does not carry Authorization: Bearer <METRICS_TOKEN>.'),
        },
      },
    },
    async (request, reply) => {
      if (expected !== null) {
        const given = request.headers.authorization;
        if (typeof given !== 'string' || !timingSafeEqual(digest(given), expected)) {
          return reply.code(401).header('WWW-Authenticate', 'Bearer').send({ message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>' });
        }
      }
      return reply.type(metrics.contentType).send(await metrics.render());
    },
  );
}
