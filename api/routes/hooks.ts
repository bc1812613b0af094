import type { FastifyInstance } from 'fastify';
import type { ResourceContext } from '../context';

/** Public hook endpoints (no auth), in their own encapsulated plugin. TODO(issue 4): filled in by its owner. */
export async function hookRoutes(_app: FastifyInstance, _ctx: ResourceContext): Promise<void> {}
