import { z } from 'zod';
import type { App } from '../types';
import type { HealthService } from '../services/health-service';

const okSchema = z.object({ ok: z.boolean() });

export function healthRoutes(app: App, health: HealthService): void {
  const config = { public: true };
  app.get(
    '/api/health',
    { config, schema: { tags: ['health'], security: [], response: { 200: okSchema.extend({ timestamp: z.string() }) } } },
    async () => ({ ok: true, timestamp: new Date().toISOString() }),
  );
  app.get(
    '/api/health/db',
    { config, schema: { tags: ['health'], security: [], response: { 200: okSchema, 503: okSchema } } },
    async (_request, reply) => {
      const ok = await health.database();
      return reply.code(ok ? 200 : 503).send({ ok });
    },
  );
  app.get(
    '/api/health/temporal',
    { config, schema: { tags: ['health'], security: [], response: { 200: okSchema, 503: okSchema } } },
    async (_request, reply) => {
      const ok = await health.temporal();
      return reply.code(ok ? 200 : 503).send({ ok });
    },
  );
}
