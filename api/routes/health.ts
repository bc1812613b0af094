import { z } from 'zod';
import type { App } from '../types';
import type { HealthService } from '../services/health-service';

const okSchema = z.object({ ok: z.boolean() });
const down = okSchema.describe('The dependency did not answer within 3 s');

export function healthRoutes(app: App, health: HealthService): void {
  const config = { public: true };
  const tags = ['health'];
  app.get(
    '/api/health',
    {
      config,
      schema: {
        tags,
        summary: 'Is the API up',
        description: 'Answers while the API process serves requests; it checks nothing else (see /api/health/db and /api/health/temporal). No credential.',
        response: { 200: okSchema.extend({ timestamp: z.string() }) },
      },
    },
    async () => ({ ok: true, timestamp: new Date().toISOString() }),
  );
  app.get(
    '/api/health/db',
    {
      config,
      schema: {
        tags,
        summary: 'Is Postgres reachable',
        description: 'Runs a query on the API\'s pool: 200 { ok: true }, or 503 { ok: false } when Postgres does not answer within 3 s. No credential.',
        response: { 200: okSchema, 503: down },
      },
    },
    async (_request, reply) => {
      const ok = await health.database();
      return reply.code(ok ? 200 : 503).send({ ok });
    },
  );
  app.get(
    '/api/health/temporal',
    {
      config,
      schema: {
        tags,
        summary: 'Is Temporal reachable',
        description:
          'Asks the Temporal frontend for its health: 200 { ok: true }, or 503 { ok: false } when it does not answer within 3 s. ' +
          'The API keeps serving while Temporal is down (work waits in the outbox). No credential.',
        response: { 200: okSchema, 503: down },
      },
    },
    async (_request, reply) => {
      const ok = await health.temporal();
      return reply.code(ok ? 200 : 503).send({ ok });
    },
  );
}
