import { z } from 'zod';
import type { App } from '../types';
import type { HealthService } from '../services/health-service';

const okSchema = z.object({ ok: z.boolean() });
const down = okSchema.extend({ message: z.string().describe('What is wrong, in one line') }).describe('The dependency is not usable');

export function healthRoutes(app: App, health: HealthService): void {
  const config = { public: true };
  const tags = ['health'];
  app.get(
    '/api/health',
    {
      config,
      schema: {
        tags,
        summary: 'Is the API process alive (liveness)',
        description:
          'Answers while the API process serves requests; it checks nothing else (readiness: /api/health/ready; ' +
          'dependencies: /api/health/db and /api/health/temporal). No credential.',
        response: { 200: okSchema.extend({ timestamp: z.string() }) },
      },
    },
    async () => ({ ok: true, timestamp: new Date().toISOString() }),
  );
  app.get(
    '/api/health/ready',
    {
      config,
      schema: {
        tags,
        summary: 'Can the API serve (readiness)',
        description:
          '200 { ok: true } when Postgres answers within 3 s and has every migration this build carries; otherwise 503 ' +
          '{ ok: false, message } naming what is missing. Temporal is not asked: the API serves while it is down (work waits in the outbox). No credential.',
        response: { 200: okSchema, 503: down },
      },
    },
    async (_request, reply) => {
      const result = await health.ready();
      return reply.code(result.ok ? 200 : 503).send(result);
    },
  );
  app.get(
    '/api/health/db',
    {
      config,
      schema: {
        tags,
        summary: 'Is Postgres reachable',
        description:
          'Runs a query on the API\'s pool: 200 { ok: true }, or 503 { ok: false, message } when Postgres does not answer within 3 s ' +
          '(the message names the dependency only; the driver\'s error goes to the log). No credential.',
        response: { 200: okSchema, 503: down },
      },
    },
    async (_request, reply) => {
      const result = await health.database();
      return reply.code(result.ok ? 200 : 503).send(result);
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
          'Asks the Temporal frontend for its health: 200 { ok: true }, or 503 { ok: false, message } when it does not answer within 3 s. ' +
          'The message names the dependency only (no address, no error of the client): the cause goes to the log. ' +
          'The API keeps serving while Temporal is down (work waits in the outbox). No credential.',
        response: { 200: okSchema, 503: down },
      },
    },
    async (_request, reply) => {
      const result = await health.temporal();
      return reply.code(result.ok ? 200 : 503).send(result);
    },
  );
}
