import { errorResponse, idParams } from '../schemas/common';
import { replayBody, replayParams, replaySchema, replayStartedSchema, rerunBody, MAX_REPLAY_RUNS } from '../schemas/reruns';
import { runSchema } from '../schemas/runs';
import type { RerunService } from '../services/rerun-service';
import { callerOf, type App } from '../types';

/** Reruns and replays (docs/api.md § Rerun and replay): `/api/runs/:id/rerun`, `/api/agents/:id/runs/replay(s)`. */
export function rerunRoutes(app: App, deps: { reruns: RerunService; recoverInterval: string }): void {
  const { reruns } = deps;
  const tags = ['runs'];

  app.post(
    '/api/runs/:id/rerun',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Rerun a run from a step',
        description:
          'Starts a new run of the same agent from step fromStep (default 0) of an ended run: 202 with the queued run, whose rerunOf ' +
          'names the run and the step. The steps before fromStep are copied into it (copied: true in its steps; recorded, not made ' +
          'again: no model or tool call for them, and their usage is not counted again), and it makes the rest with the agent as it is ' +
          'now (its system message, model and tools; a model run reads the copied conversation first). From step 0 it is a new run ' +
          "of the run's input, or of input when given. It is started, limited and refused as POST /api/agents/:id/runs is (the " +
          'same right, RUN_CONCURRENCY_PER_ACCOUNT, a template or paused agent 409, MODEL_TOKENS_PER_DAY 429).',
        params: idParams,
        body: rerunBody,
        response: {
          202: runSchema,
          400: errorResponse("fromStep is past the run's last step (more than its number of steps), or input was sent with a fromStep after 0."),
          409: errorResponse('The run has not ended (queued, running or waiting), or its agent is a template or paused.'),
          429: errorResponse("The agent's runs use the model and the account has spent MODEL_TOKENS_PER_DAY for today (UTC); Retry-After says when it starts afresh."),
        },
      },
    },
    async (request, reply) => reply.code(202).send(await reruns.rerun(callerOf(request), request.params.id, request.body)),
  );

  app.post(
    '/api/agents/:id/runs/replay',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: "Replay an agent's failed runs",
        description:
          `Reruns from step 0, each with its own input, the agent's runs that failed and were created in [since, until) (until: now ` +
          `when omitted): the oldest ${MAX_REPLAY_RUNS} of them, chosen now. 202 with the replay's id and how many runs it reruns; ` +
          'the reruns are started in the background, batch by batch, each taking its place in the account\'s line of runs as any run ' +
          '(RUN_CONCURRENCY_PER_ACCOUNT); follow them with GET /api/agents/:id/runs/replays/:replayId. One replay per agent every ' +
          `${deps.recoverInterval} (RECOVER_INTERVAL), else 429 with Retry-After. The same right as starting a run.`,
        params: idParams,
        body: replayBody,
        response: {
          202: replayStartedSchema,
          409: errorResponse('The agent is a template or paused: it does not run.'),
          429: errorResponse("A replay of this agent was asked for less than RECOVER_INTERVAL ago, or the account has spent MODEL_TOKENS_PER_DAY; Retry-After says when to try again."),
        },
      },
    },
    async (request, reply) => reply.code(202).send(await reruns.replay(callerOf(request), request.params.id, request.body)),
  );

  app.get(
    '/api/agents/:id/runs/replays/:replayId',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get a replay',
        description: "A replay's progress: how many runs it reruns (count), how many reruns it has started, and running, done or failed (a batch that could not be written for good stops it there).",
        params: replayParams,
        response: { 200: replaySchema },
      },
    },
    async (request) => reruns.getReplay(callerOf(request), request.params.id, request.params.replayId),
  );
}
