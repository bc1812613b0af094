import { z } from 'zod';
import { pageRequest, sendPage, type Page, type PageRequest } from '../pagination';
import { agentIdParams, errorResponse, idParams, listQuery, noContent, URL_LOOKUPS_BUSY } from '../schemas/common';
import type { Caller } from '../services/auth-service';
import { callerOf, type App } from '../types';

/**
 * What the routes need of a service made with createAgentChildService (services/agent-children.ts).
 * Function properties, not methods, so parameters are checked strictly (not bivariantly).
 */
export interface AgentChildRouteService<Item, CreateInput, UpdateInput> {
  list: (caller: Caller, agentId: string, page: PageRequest) => Promise<Page<Item>>;
  create: (caller: Caller, agentId: string, input: CreateInput) => Promise<Item>;
  /** The create's checks that may wait on the network, run as the create route's preflight (api/plugins/preflight.ts). */
  checkCreate?: (caller: Caller, agentId: string, input: CreateInput) => Promise<void>;
  get: (caller: Caller, id: string) => Promise<Item>;
  update: (caller: Caller, id: string, patch: UpdateInput) => Promise<Item>;
  delete: (caller: Caller, id: string) => Promise<void>;
}

/**
 * The routes of a child collection of an agent (connectors, tools): list and create under
 * `/api/agents/:agentId/<collection>`, get, update (PUT and PATCH) and delete at `/api/<collection>/:id`.
 *
 * The signature is what is type-checked: Item, CreateInput and UpdateInput are inferred from the
 * schemas (their outputs), and the service must take the create/update bodies and return items
 * (`NoInfer`: the service is checked against the schemas, it does not widen them).
 */
export function agentChildRoutes<Item, CreateInput, UpdateInput>(
  app: App,
  options: {
    /** URL segment and OpenAPI tag, e.g. 'connectors'. */
    collection: string;
    /** The resource in summaries, e.g. 'connector'. */
    noun: string;
    schemas: { item: z.ZodType<Item>; create: z.ZodType<CreateInput>; update: z.ZodType<UpdateInput> };
    service: AgentChildRouteService<NoInfer<Item>, NoInfer<CreateInput>, NoInfer<UpdateInput>>;
    publicBaseUrl: string;
    /** The create route's description (what is specific to the resource). */
    createDescription: string;
    /** What the create's 403 says: the quota. */
    quota: string;
    /** Its configs hold URLs that are checked (a lookup): an update may answer 429 (docs/api.md § URL checks). */
    checksUrls?: boolean;
  },
): void {
  const { collection, noun, service } = options;
  // The zod type provider cannot resolve request and reply types through generic schemas (fastify's
  // `UndefinedToUnknown<T>` stays deferred), so the routes below see the schemas widened to z.ZodType:
  // replies are not checked here (the signature did that) and the two bodies are cast back to their
  // types. The casts are sound: Fastify has validated each body with the schema whose output it is.
  const schemas: { item: z.ZodType; create: z.ZodType; update: z.ZodType } = options.schemas;
  const listUrl = `/api/agents/:agentId/${collection}`;
  const itemUrl = `/api/${collection}/:id`;
  const tags = [collection];
  const agentMissing = errorResponse('No agent with this id in your account.');

  app.get(
    listUrl,
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: `List an agent's ${collection}`,
        description: `The agent's ${collection}, newest first. Secrets are masked.`,
        params: agentIdParams,
        querystring: listQuery,
        response: { 200: z.array(schemas.item), 404: agentMissing },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await service.list(callerOf(request), request.params.agentId, pageRequest(request.query)), options.publicBaseUrl),
  );

  const { checkCreate } = service;
  app.post(
    listUrl,
    {
      config: {
        access: 'write',
        preflight: checkCreate && ((request) => checkCreate(callerOf(request), (request.params as { agentId: string }).agentId, request.body as CreateInput)),
      },
      schema: {
        tags,
        summary: `Create a ${noun}`,
        description: options.createDescription,
        params: agentIdParams,
        body: schemas.create,
        response: { 201: schemas.item, 403: errorResponse(`${options.quota}. Nothing is written.`), 404: agentMissing },
      },
    },
    async (request, reply) => reply.code(201).send(await service.create(callerOf(request), request.params.agentId, request.body as CreateInput)),
  );

  app.get(
    itemUrl,
    { config: { access: 'read' }, schema: { tags, summary: `Get a ${noun}`, description: `One ${noun}; secrets are masked.`, params: idParams, response: { 200: schemas.item } } },
    async (request) => service.get(callerOf(request), request.params.id),
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: itemUrl,
      config: { access: 'write' },
      schema: {
        tags,
        summary: `Update a ${noun}`,
        description:
          'Partial update (PUT and PATCH alike): any subset of the writable fields. configJson is a JSON merge patch (RFC 7386) ' +
          'onto the current config, unless type changes: then it is required and replaces the config. The result is validated ' +
          'as a whole, per type. A secret sent masked stays unchanged; a secret set here is shown in full in this response only.',
        params: idParams,
        body: schemas.update,
        response: { 200: schemas.item, ...(options.checksUrls ? { 429: errorResponse(URL_LOOKUPS_BUSY) } : {}) },
      },
      handler: async (request) => service.update(callerOf(request), request.params.id, request.body as UpdateInput),
    });
  }

  app.delete(
    itemUrl,
    { config: { access: 'delete' }, schema: { tags, summary: `Delete a ${noun}`, description: `Deletes the ${noun} (204).`, params: idParams, response: { 204: noContent } } },
    async (request, reply) => {
      await service.delete(callerOf(request), request.params.id);
      return reply.code(204).send();
    },
  );
}
