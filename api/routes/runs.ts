import { z } from 'zod';
import { indexPageRequest, pageRequest, sendPage } from '../pagination';
import { authErrors, errorSchema, idParams, listQuery } from '../schemas/common';
import { createRunBody, runSchema, runStepSchema } from '../schemas/runs';
import type { RunService } from '../services/run-service';
import { callerOf, type App } from '../types';

/** Agent runs (DESIGN §4 Agent runs): `/api/agents/:id/runs` and `/api/runs/:id`. */
export function runRoutes(app: App, deps: { runs: RunService; publicBaseUrl: string }): void {
  const { runs } = deps;
  const tags = ['runs'];
  const itemErrors = { 404: errorSchema, ...authErrors };

  app.post(
    '/api/agents/:id/runs',
    {
      schema: {
        tags,
        description:
          'Starts a run of the agent: 202 with the queued run; poll GET /api/runs/:id for its status and output, and ' +
          'GET /api/runs/:id/steps for each tool call. It waits as queued while RUN_CONCURRENCY_PER_ACCOUNT runs of the account are ' +
          "running (runs start in created order), then executes the agent's enabled tools in created order, one step each (custom " +
          'tools call their endpoint with bodyTemplate filled from input: {{input}} is the whole input as JSON, {{input.a.b}} the ' +
          'value at that path as JSON; data tools call their public APIs), within RUN_TIMEOUT_MS of starting (then it fails with ' +
          '"timed out"). It succeeds when it has no enabled tools or at least one tool succeeded, and fails when every tool failed; ' +
          'on finish it emits agent.completed { agentId, runId, output, chainDepth } or agent.failed { agentId, runId, error, chainDepth }. ' +
          'Draft and active agents run; a template or a paused agent answers 409.',
        params: idParams,
        body: createRunBody,
        response: { 202: runSchema, 400: errorSchema, 409: errorSchema, 422: errorSchema, ...itemErrors },
      },
    },
    async (request, reply) => reply.code(202).send(await runs.create(callerOf(request), request.params.id, request.body)),
  );

  app.get(
    '/api/agents/:id/runs',
    {
      schema: {
        tags,
        description: 'The runs of the agent, newest first.',
        params: idParams,
        querystring: listQuery,
        response: { 200: z.array(runSchema), 400: errorSchema, ...itemErrors },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await runs.list(callerOf(request), request.params.id, pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.get('/api/runs/:id', { schema: { tags, params: idParams, response: { 200: runSchema, ...itemErrors } } }, async (request) =>
    runs.get(callerOf(request), request.params.id),
  );

  app.get(
    '/api/runs/:id/steps',
    {
      schema: {
        tags,
        description:
          "The run's steps in the order they are made (index 0 first, not newest first), paged with limit and cursor like every " +
          'list: one step per tool call, planned when the run starts running. A step that finished is never made again, even ' +
          'when the run resumes after a crash.',
        params: idParams,
        querystring: listQuery,
        response: { 200: z.array(runStepSchema), 400: errorSchema, ...itemErrors },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await runs.steps(callerOf(request), request.params.id, indexPageRequest(request.query)), deps.publicBaseUrl),
  );
}
