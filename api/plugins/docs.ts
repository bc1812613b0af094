import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { OpenAPIV3_1 } from 'openapi-types';
import { z } from 'zod';
import { errorSchema, isErrorResponse, URL_LOOKUPS_BUSY } from '../schemas/common';
import type { Access } from '../services/access';
import { documentationOf } from '../schemas/documentation';

/** What an error status means, as the document says wherever a route answers it without saying more. */
const MEANINGS: Record<string, string> = {
  400: 'Bad input. The message names the field (`body.name: …`, `querystring.limit: …`, `body.configJson.cronExpression: …`), or says that the body is not JSON or holds what the API never stores (nesting deeper than 64 levels, a NUL character, a "__proto__" key).',
  401: 'No credential, or an invalid or expired one.',
  402: 'The balance is short; the message says the price and the balance.',
  403: 'A quota is full; the message names it.',
  404: 'Nothing with this id in the account acted in (unknown, another account\'s, or a malformed id).',
  409: 'Conflict with the current state; the message says which.',
  413: 'The body is larger than 1 MiB.',
  415: 'The body is not JSON: send Content-Type: application/json.',
  422: 'This Idempotency-Key was already used with a different request.',
  429: 'Too many requests: retry after Retry-After seconds.',
};
/** api/plugins/request-turns.ts: every authenticated route's share of the process. */
const REQUESTS_BUSY =
  'The account has REQUESTS_IN_FLIGHT_PER_ACCOUNT requests in progress in this API process, or the process has REQUESTS_IN_FLIGHT_PER_PROCESS ' +
  'and this request waited REQUESTS_TURN_WAIT_MS for its turn (an account with none in progress is always served): retry after Retry-After seconds.';
const IDEMPOTENCY_IN_PROGRESS = 'A request with this Idempotency-Key is still in progress.';
const NO_SUCH_ACCOUNT = 'The Account-Id header names an account you may not act in (not yours, not an active member of it, or no such account).';
/** Why a route's access rule (services/access.ts) can refuse the caller, as its 403 says. */
const REFUSED: Partial<Record<Access, string>> = {
  write: 'Your role in the account acted in is viewer: read-only.',
  delete: 'Your permissions in the account acted in lack canDelete.',
  manageTeam: 'Your permissions in the account acted in lack canManageTeam.',
  export: 'Your permissions in the account acted in lack canExport.',
  audit: 'Your role in the account acted in is editor or viewer: the audit log is for the owner and admins.',
};
/** A success response's description, unless its schema has one. */
const SUCCESS: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted: the work is queued and happens shortly', 204: 'Done; no content' };

const accountIdHeader = {
  'account-id': z
    .string()
    .optional()
    .describe(
      'The account this request acts in: one from GET /api/accounts (your own when absent). Its owner and its active members may ' +
        'act there, with the rights of their role; anyone else gets 404.',
    ),
};

const idempotencyKeyHeader = {
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe('Makes the POST safe to retry: the first response (errors included, not 400 or 5xx) is replayed for 24 h with Idempotent-Replayed: true'),
};

/**
 * The error statuses a route can answer because of what the app does around every handler, so that
 * no route has to list them and none can forget one: the body parser and the body guard (any method
 * that carries a body: 400, 413, 415), validation of the query and headers (400), authentication
 * (every route not `config.public`: 401), the acting account (Account-Id: 404) and the route's access
 * rule (403), the path's ids (a malformed or unknown one: 404) and Idempotency-Key on authenticated
 * POSTs (409 in progress, 422 another request).
 */
function sharedErrors(schema: FastifySchema, route: RouteOptions): Record<string, string> {
  const { carriesBody, authenticated, idempotent, access } = traitsOf(route);
  const shared: Record<string, string> = {};
  if (carriesBody || schema.querystring || schema.headers) shared[400] = MEANINGS[400]!;
  if (authenticated) shared[401] = MEANINGS[401]!;
  if (access && REFUSED[access]) shared[403] = REFUSED[access];
  const notFound = [schema.params ? MEANINGS[404] : undefined, authenticated ? NO_SUCH_ACCOUNT : undefined].filter(Boolean);
  if (notFound.length) shared[404] = notFound.join(' ');
  if (idempotent) Object.assign(shared, { 409: IDEMPOTENCY_IN_PROGRESS, 422: MEANINGS[422] });
  if (carriesBody) Object.assign(shared, { 413: MEANINGS[413], 415: MEANINGS[415] });
  const busy = [route.config?.preflight ? URL_LOOKUPS_BUSY : undefined, authenticated ? REQUESTS_BUSY : undefined].filter(Boolean);
  if (busy.length) shared[429] = busy.join(' ');
  return shared;
}

/** What the app's shared machinery sees of a route (see sharedErrors). */
function traitsOf(route: RouteOptions) {
  const methods = [route.method].flat();
  const authenticated = !route.config?.public;
  return {
    access: authenticated ? route.config?.access : undefined,
    // Fastify parses a body sent with any method but GET and HEAD, DELETE included.
    carriesBody: methods.some((method) => method !== 'GET' && method !== 'HEAD'),
    authenticated,
    idempotent: authenticated && methods.includes('POST'),
  };
}

/**
 * The route's schema as the document shows it: the body's documentation schema (schemas/documentation.ts),
 * every error status it can answer, each described (what the route says of it and what the app adds),
 * Idempotency-Key on authenticated POSTs, and no security requirement on public routes.
 */
function documentedSchema(schema: FastifySchema, route: RouteOptions): FastifySchema {
  const shared = sharedErrors(schema, route);
  const response: Record<string, unknown> = { ...(schema.response as Record<string, unknown> | undefined) };
  for (const [status, declared] of Object.entries(response)) {
    if (SUCCESS[status] && declared instanceof z.ZodType && !declared.description) response[status] = declared.describe(SUCCESS[status]);
  }
  for (const status of new Set([...Object.keys(response), ...Object.keys(shared)])) {
    const declared = response[status];
    if (Number(status) < 400 || (declared !== undefined && !isErrorResponse(declared))) continue;
    const own = declared !== errorSchema ? (declared as z.ZodType | undefined)?.description : undefined;
    // A route's own 401 or 404 says more precisely what the shared one says (the Account-Id cause of a 404
    // stays); its 400, 403 or 409 is one more cause.
    const causes =
      own && status === '401' ? [own] : own && status === '404' ? [own, traitsOf(route).authenticated ? NO_SUCH_ACCOUNT : undefined] : [own, shared[status]];
    const text = causes.filter(Boolean).join(' ') || MEANINGS[status];
    response[status] = text ? errorSchema.describe(text) : errorSchema;
  }
  const { authenticated, idempotent } = traitsOf(route);
  const headers = { ...(authenticated ? accountIdHeader : {}), ...(idempotent ? idempotencyKeyHeader : {}) };
  return {
    ...schema,
    body: documentationOf(schema.body),
    response,
    // A route's own headers (e.g. a stream's Last-Event-ID) are documented beside the shared ones.
    ...(Object.keys(headers).length ? { headers: schema.headers instanceof z.ZodObject ? schema.headers.extend(headers) : z.object(headers) } : {}),
    ...(authenticated ? {} : { security: [] }),
  };
}

type MediaObject = OpenAPIV3_1.MediaTypeObject;
type SchemaObject = OpenAPIV3_1.SchemaObject & { examples?: unknown[] };

/**
 * Swagger UI fills "Try it out" with a body's example; for a union on `type` it would only ever show
 * the first type's. So each variant's example becomes a named example of the request body (a menu in
 * Swagger UI: cron, webhook, event, …); the variants in components keep theirs.
 */
function nameVariantExamples(document: OpenAPIV3_1.Document): OpenAPIV3_1.Document {
  const components = document.components?.schemas ?? {};
  const resolve = (schema: unknown): SchemaObject | undefined => {
    const ref = (schema as { $ref?: string } | undefined)?.$ref;
    return ref ? components[ref.replace('#/components/schemas/', '')] as SchemaObject | undefined : (schema as SchemaObject | undefined);
  };
  const variants = (schema: SchemaObject | undefined): SchemaObject[] => {
    const options = schema?.oneOf ?? schema?.anyOf;
    return options ? options.flatMap((option) => variants(resolve(option))) : schema ? [schema] : [];
  };
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations ?? {})) {
      const media = (operation as OpenAPIV3_1.OperationObject).requestBody as { content?: Record<string, MediaObject> } | undefined;
      const json = media?.content?.['application/json'];
      const named = variants(resolve(json?.schema)).filter((variant) => variant.title && variant.examples?.length);
      if (!json || named.length < 2) continue;
      json.examples = Object.fromEntries(named.map((variant) => [variant.title, { summary: variant.title, value: variant.examples![0] }]));
    }
  }
  return document;
}

/** OpenAPI 3.1 generated from the same zod schemas that validate requests; Swagger UI at /api/docs. */
export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agent Platform API',
        version: '1',
        description:
          'Build and operate AI agents. Errors are `{ "message": string }`. Every response carries `API-Version: 1`. A request acts ' +
          'in your own account, or in a team account you are a member of when it names it in the `Account-Id` header (GET ' +
          '/api/accounts lists them); your role there (viewer, editor, admin) decides what you may do, and a refusal is a 403 ' +
          'naming the missing right.',
      },
      // Relative: "Try it out" calls the host the docs were loaded from, whichever name it was reached by
      // (127.0.0.1, localhost, a proxy's), never another origin the browser would block.
      servers: [{ url: '/', description: 'The server this document was loaded from' }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An access token (JWT, 15 min) or an API key (apk_…)' },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: (input) => jsonSchemaTransform({ ...input, schema: input.schema && documentedSchema(input.schema, input.route) }),
    transformObject: (input) => nameVariantExamples(jsonSchemaTransformObject(input) as OpenAPIV3_1.Document) as ReturnType<typeof jsonSchemaTransformObject>,
  });
  await app.register(swaggerUi, {
    routePrefix: '/api/docs',
    // Replaces the API's allow-nothing policy on the docs routes. The page loads its scripts, styles and
    // the spec from this server (swagger-ui 5 has no inline code: its swaggerCSP lists no hashes), shows
    // data: images (its logo, icons) and sends "Try it out" requests to the same origin (the servers
    // entry is relative). No upgrade-insecure-requests, unlike swagger-ui's own `staticCSP: true`: it
    // breaks the page on http://localhost.
    staticCSP: {
      'default-src': ["'self'"],
      'base-uri': ["'self'"],
      'connect-src': ["'self'"],
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
