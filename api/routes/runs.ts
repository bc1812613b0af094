import { z } from 'zod';
import { indexPageRequest, pageRequest, sendPage } from '../pagination';
import { errorResponse, idParams, listQuery } from '../schemas/common';
import { createRunBody, runDetailSchema, runEventsHeaders, runEventStream, runListQuery, runSchema, runStepSchema, threadMessageSchema, threadParams } from '../schemas/runs';
import type { RunEventService } from '../services/run-events';
import type { RunService } from '../services/run-service';
import { openEventStream } from '../event-stream';
import { endTurn } from '../plugins/request-turns';
import { callerCheckOf, callerOf, type App } from '../types';

/** Agent runs (docs/api.md § Agent runs): `/api/agents/:id/runs` and `/api/runs/:id`. */
export function runRoutes(
  app: App,
  deps: {
    runs: RunService;
    runEvents: RunEventService;
    heartbeatMs: number;
    /** The streams' bounds, for the description. */
    streams: { perUser: number; perAccount: number; perProcess: number; checkMs: number };
    publicBaseUrl: string;
  },
): void {
  const { runs, runEvents } = deps;
  const tags = ['runs'];

  app.post(
    '/api/agents/:id/runs',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Run an agent',
        description:
          'Starts a run of the agent: 202 with the queued run; follow it live with GET /api/runs/:id/events (Server-Sent Events), or ' +
          'poll GET /api/runs/:id and GET /api/runs/:id/steps. It waits as queued while RUN_CONCURRENCY_PER_ACCOUNT runs of the ' +
          'account are running (runs start in created order), then runs within RUN_TIMEOUT_MS of starting (then it fails with "timed ' +
          'out"). With a language model (MODEL_BASE_URL on the deployment and a model named by configJson.model or MODEL_NAME) the ' +
          "agent thinks: input is the user's message, the system message is composed from systemPrompt, persona, goal, voice and " +
          'policies, the enabled tools are offered as functions, and each model call and tool call is a step, up to configJson.maxSteps ' +
          'model calls; runs with the same threadId share a conversation (memoryConfig). Output { text, steps, usage }. Without one, ' +
          "the tool executor calls the agent's enabled tools in created order with the input (custom tools fill bodyTemplate: " +
          '{{input}} is the whole input as JSON, {{input.a.b}} the value at that path) and succeeds when it has no enabled tools or at ' +
          'least one succeeded. On finish it emits agent.completed { agentId, runId, output, chainDepth } or agent.failed { agentId, ' +
          'runId, error, chainDepth }. Draft and active agents run; a template or a paused agent answers 409. A run that would use ' +
          "the model while the account has spent MODEL_TOKENS_PER_DAY tokens today (UTC) answers 429 with Retry-After (the seconds to " +
          'the next UTC day); a run that crosses the budget while it runs fails, its error naming the budget.',
        params: idParams,
        body: createRunBody,
        response: {
          202: runSchema,
          409: errorResponse('The agent is a template or paused: it does not run.'),
          429: errorResponse("The agent's runs use the model and the account has spent MODEL_TOKENS_PER_DAY for today (UTC); Retry-After says when it starts afresh."),
        },
      },
    },
    async (request, reply) => reply.code(202).send(await runs.create(callerOf(request), request.params.id, request.body)),
  );

  app.get(
    '/api/runs',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List runs',
        description:
          'The runs of every agent of the account, newest first; agentId keeps one agent\'s, status one status (queued, running, succeeded, failed). ' +
          'The Link header\'s next page keeps both.',
        querystring: runListQuery,
        response: { 200: z.array(runSchema) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await runs.listAll(callerOf(request), { agentId: request.query.agentId, status: request.query.status }, pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.get(
    '/api/agents/:id/runs',
    {
      config: { access: 'read' },
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
    '/api/agents/:id/threads/:threadId/messages',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: "List a conversation thread's messages",
        description:
          'The messages of the thread (runs of this agent started with this threadId), newest first, paged like every list. Each ' +
          "succeeded run with a language model adds two: its input as the user's message and the model's answer. When a run starts, " +
          'the model is sent the newest memoryConfig.maxMessages of them that are younger than memoryConfig.ttlMinutes (none with ' +
          'memoryConfig.type "none"). A thread nothing was said in yet answers an empty list.',
        params: threadParams,
        querystring: listQuery,
        response: { 200: z.array(threadMessageSchema) },
      },
    },
    async (request, reply) =>
      sendPage(
        request,
        reply,
        await runs.threadMessages(callerOf(request), request.params.id, request.params.threadId, pageRequest(request.query)),
        deps.publicBaseUrl,
      ),
  );

  app.get(
    '/api/runs/:id',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get a run',
        description:
          'One run: queued, running, succeeded or failed, with its output or error once finished. Poll it after starting a run. ' +
          'With its latest reruns (reruns, newest first, at most 20) and, for a rerun, the run it reruns (rerunOf).',
        params: idParams,
        response: { 200: runDetailSchema },
      },
    },
    async (request) => runs.get(callerOf(request), request.params.id),
  );

  app.post(
    '/api/runs/:id/cancel',
    {
      config: { access: 'write', callsTemporal: true },
      schema: {
        tags,
        summary: 'Cancel a run',
        description:
          'Stops a queued or running run: 202 with the run as it stands when the cancel is asked for. A run with a workflow is ' +
          'cancelled through Temporal: the step in flight is cancelled (its model or tool call torn down, nothing recorded for it), ' +
          'no further step is made, and the run ends failed with the error "the run was cancelled" and emits agent.failed ' +
          '{ agentId, runId, error, chainDepth }, usually within a second or two (follow it with GET /api/runs/:id/events). A ' +
          'queued run that waits in its account\'s line without a workflow yet is ended so at once (the answer shows it failed). ' +
          'The same right as starting a run (owner, admin, editor); asking again while it stops answers 202 again.',
        params: idParams,
        response: {
          202: runSchema,
          409: errorResponse('The run has ended (succeeded or failed): there is nothing to cancel.'),
          503: errorResponse('Temporal did not take the cancel within 5 s: the run is unchanged; Retry-After says when to try again.'),
        },
      },
    },
    async (request, reply) => reply.code(202).send(await runs.cancel(callerOf(request), request.params.id)),
  );

  app.get(
    '/api/runs/:id/steps',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: "List a run's steps",
        description:
          "The run's steps in the order they are made (index 0 first, not newest first), paged with limit and cursor like every " +
          'list: one step per model call and per tool call. The tool executor plans its tool steps when the run starts running; a ' +
          "model step adds the tool calls its answer asks for and the model step after them. A step that finished is never made " +
          'again, even when the run resumes after a crash.',
        params: idParams,
        querystring: listQuery,
        response: { 200: z.array(runStepSchema) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await runs.steps(callerOf(request), request.params.id, indexPageRequest(request.query)), deps.publicBaseUrl),
  );

  app.get(
    '/api/runs/:id/events',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: "Follow a run live (Server-Sent Events)",
        description:
          'A text/event-stream of the run as it happens: each step once it finished, as `event: step` with the step index as its ' +
          '`id` and the step (as in GET /api/runs/:id/steps) as `data`, in index order; while the run waits for a decision, ' +
          '`event: waiting` with the pending approval (as in GET /api/approvals/:id), and the stream goes on when the run resumes; ' +
          'then `event: done` with the finished run, ' +
          'and the stream ends (close your client there: an EventSource would otherwise reconnect and get `done` again). A run ' +
          'that already ended answers its steps and `done` at once. Reconnecting with the header Last-Event-ID: <index> resumes ' +
          `after that step. A comment line \`: heartbeat\` comes every ${Math.round(deps.heartbeatMs / 1000)} s while nothing happens ` +
          '(RUN_EVENTS_HEARTBEAT_MS), so proxies keep the connection open. Send the credential in the Authorization header. ' +
          `Bounded: at most ${deps.streams.perUser} streams open at once per user across every API instance (RUN_STREAMS_PER_USER; ` +
          `429 past it), ${deps.streams.perAccount} per account across every API instance (RUN_STREAMS_PER_ACCOUNT; 429 past it) and ` +
          `${deps.streams.perProcess} per API process (RUN_STREAMS_PER_PROCESS; 503 past it); a client whose unsent ` +
          'data passes 1 MiB is not reading and is disconnected; a stream whose caller loses access (removed from the account, ' +
          `access token expired, API key deleted) ends within ${deps.streams.checkMs >= 1000 ? `${deps.streams.checkMs / 1000} s` : `${deps.streams.checkMs} ms`} (RUN_STREAMS_CHECK_MS). ` +
          'A stream that ends without `done` can be resumed with Last-Event-ID.',
        params: idParams,
        headers: runEventsHeaders,
        response: {
          200: { description: 'The stream of the run\'s events', content: { 'text/event-stream': { schema: runEventStream } } },
          429: errorResponse('The caller has RUN_STREAMS_PER_USER live run streams open (in every API instance together), or the account RUN_STREAMS_PER_ACCOUNT (in every API instance together); Retry-After says when to try again (a client may follow the run by polling meanwhile).'),
          503: errorResponse('This API process has RUN_STREAMS_PER_PROCESS live run streams open; Retry-After says when to try again (another instance may take it).'),
        },
      },
    },
    async (request, reply) => {
      const lastEventId = request.headers['last-event-id'];
      const live = await runEvents.open(callerOf(request), request.params.id, callerCheckOf(request));
      // Open: RUN_STREAMS_PER_ACCOUNT bounds it from here, not the account's turns of requests in progress.
      endTurn(request);
      reply.hijack();
      try {
        const sink = openEventStream(reply.raw, reply.getHeaders() as Record<string, string | string[]>);
        try {
          await live.stream(typeof lastEventId === 'string' ? Number(lastEventId) : -1, sink);
        } catch (err) {
          // The stream has started: there is no status left to answer. The client reconnects with Last-Event-ID.
          request.log.error({ err }, 'run event stream failed');
        } finally {
          await sink.finish(deps.heartbeatMs);
        }
      } finally {
        live.close();
      }
    },
  );
}
