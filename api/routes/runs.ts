import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { errorResponse, idParams, listQuery } from '../schemas/common';
import { createRunBody, runSchema } from '../schemas/runs';
import type { RunService } from '../services/run-service';
import { callerOf, type App } from '../types';

/** Agent runs (DESIGN §4 Agent runs): `/api/agents/:id/runs` and `/api/runs/:id`. */
export function runRoutes(app: App, deps: { runs: RunService; publicBaseUrl: string }): void {
  const { runs } = deps;
  const tags = ['runs'];

  app.post(
    '/api/agents/:id/runs',
    {
      schema: {
        tags,
        summary: 'Run an agent',
        description:
          'Starts a run of the agent: 202 with the queued run; poll GET /api/runs/:id for its status and output. The run executes ' +
          "the agent's enabled tools in created order (custom tools call their endpoint with bodyTemplate filled from input: " +
          '{{input}} is the whole input as JSON, {{input.a.b}} the value at that path as JSON; data tools call their public APIs). ' +
          'It succeeds when it has no enabled tools or at least one tool succeeded, and fails when every tool failed; on finish it ' +
          'emits agent.completed { agentId, runId, output, chainDepth } or agent.failed { agentId, runId, error, chainDepth }. ' +
          'Draft, active and paused agents run; a template answers 409.',
        params: idParams,
        body: createRunBody,
        response: { 202: runSchema, 409: errorResponse('The agent is a template: templates do not run.') },
      },
    },
    async (request, reply) => reply.code(202).send(await runs.create(callerOf(request), request.params.id, request.body)),
  );

  app.get(
    '/api/agents/:id/runs',
    {
      schema: {
        tags,
        summary: 'List an agent\'s runs',
        description: 'The runs of the agent, newest first, with their status, input and output.',
        params: idParams,
        querystring: listQuery,
        response: { 200: z.array(runSchema) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await runs.list(callerOf(request), request.params.id, pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.get(
    '/api/runs/:id',
    {
      schema: {
        tags,
        summary: 'Get a run',
        description: 'One run: queued, running, succeeded or failed, with its output or error once finished. Poll it after starting a run.',
        params: idParams,
        response: { 200: runSchema },
      },
    },
    async (request) => runs.get(callerOf(request), request.params.id),
  );
}
