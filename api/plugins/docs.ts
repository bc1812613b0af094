import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';

/** OpenAPI 3.1 generated from the same zod schemas that validate requests; Swagger UI at /api/docs. */
export async function registerDocs(app: FastifyInstance, publicBaseUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agent Platform API',
        version: '1',
        description: 'Build and operate AI agents. Errors are `{ "message": string }`. Every response carries `API-Version: 1`.',
      },
      servers: [{ url: publicBaseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An access token (JWT, 15 min) or an API key (apk_…)' },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, {
    routePrefix: '/api/docs',
    // Replaces the API's allow-nothing policy on the docs routes. The page loads its scripts, styles and
    // the spec from this server (swagger-ui 5 has no inline code: its swaggerCSP lists no hashes), shows
    // data: images (its logo, icons) and sends "Try it out" requests to PUBLIC_BASE_URL. No
    // upgrade-insecure-requests, unlike swagger-ui's own `staticCSP: true`: it breaks the page on
    // http://localhost.
    staticCSP: {
      'default-src': ["'self'"],
      'base-uri': ["'self'"],
      'connect-src': ["'self'", new URL(publicBaseUrl).origin],
      'font-src': ["'self'", 'data:'],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
      'img-src': ["'self'", 'data:'],
      'object-src': ["'none'"],
      'script-src': ["'self'"],
      'script-src-attr': ["'none'"],
      'style-src': ["'self'"],
    },
  });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
