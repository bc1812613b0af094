import { createHmac } from 'node:crypto';
import cookie from '@fastify/cookie';
import Fastify, { type FastifyServerOptions } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from '../lib/config';
import { createEngine, taskQueuePollers, type TemporalClient } from '../engine';
import { createSecretBox } from '../lib/secrets';
import { createNotificationListener } from '../db/notifications';
import type { Db } from '../db/pool';
import { fastifyTrustProxy } from './client-address';
import { registerAuthRateLimit } from './plugins/auth-rate-limit';
import { guardBodies } from './plugins/body-guard';
import { requireAuthentication } from './plugins/authenticate';
import { shareRequestTurns } from './plugins/request-turns';
import { loadConsole } from './plugins/console';
import { registerDocs } from './plugins/docs';
import { measureRequests, metricsRoute } from './plugins/metrics';
import { frameworkErrors, installErrorHandling } from './plugins/error-handler';
import { supportIdempotencyKeys } from './plugins/idempotency';
import { runPreflights } from './plugins/preflight';
import { registerSecurityHeaders } from './plugins/security-headers';
import { responseSerializerCompiler } from './plugins/serializer';
import { accountRoutes } from './routes/account';
import { agentRoutes } from './routes/agents';
import { authRoutes } from './routes/auth';
import { connectorRoutes } from './routes/connectors';
// Team out of alphabetical order on purpose: zod registers a schema as a component when its module
// loads, so these imports fix the order of components in /api/openapi.json (team's follow connectors').
import { teamRoutes } from './routes/team';
import { deliveryRoutes } from './routes/deliveries';
import { fireOutcomeRoutes } from './routes/fire-outcomes';
import { fireRoutes } from './routes/fires';
import { hookRoutes } from './routes/hooks';
import { mcpRoutes } from './routes/mcp';
import { healthRoutes } from './routes/health';
import { rerunRoutes } from './routes/reruns';
import { runRoutes } from './routes/runs';
import { approvalRoutes } from './routes/approvals';
import { scheduleTruthRoutes } from './routes/schedule-truth';
import { settingsRoutes } from './routes/settings';
import { toolRoutes } from './routes/tools';
import { triggerRoutes } from './routes/triggers';
import { webhookStatsRoutes } from './routes/webhook-stats';
import { webhookRoutes } from './routes/webhooks';
import { requestIdOf } from './request-id';
import { createRepositories, createServices } from './services';
import { detachCallerTrace } from '../lib/tracing/context';
import { createMetricsService } from './services/metrics-service';
import './types';

export interface AppDeps {
  config: Config;
  db: Db;
  /** The process's one Temporal client (lazy: the API starts even while Temporal is down). */
  temporal: TemporalClient;
  logger?: FastifyServerOptions['logger'];
  /** The built console to serve at / (default: web/dist of this package). */
  consoleDir?: string;
}

/** Builds the API without listening; the server entry and the tests both use it. */
export async function buildApp(deps: AppDeps) {
  const { config, db } = deps;
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel },
    trustProxy: fastifyTrustProxy(config.http.trustProxy),
    bodyLimit: 1024 * 1024,
    // Plain JSON.parse: a "__proto__" key stays an own key, and the body guard refuses it naming where it
    // is (the parser's own refusal would be a bare "Malformed JSON").
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors,
    // Every log line of a request carries its id (reqId), and the response sends it back (Request-Id).
    requestIdHeader: false,
    genReqId: requestIdOf,
    // Public routes start their own trace: a stranger's trace headers are taken off before any hook.
    rewriteUrl: (req) => {
      detachCallerTrace(req);
      return req.url ?? '/';
    },
  }).withTypeProvider<ZodTypeProvider>();
  await registerSecurityHeaders(app);
  // JSON only: a text/plain body answers 415 instead of reaching validation as a string.
  app.removeContentTypeParser(['text/plain']);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializerCompiler);
  // The console's pages answer browser requests outside /api that no route matched (plugins/console.ts).
  const consoleSite = loadConsole(deps.consoleDir);
  installErrorHandling(app, consoleSite.fallback);
  guardBodies(app);
  // Hooks on every request are callback style where they need not wait: each async hook is promises
  // per request, which tracing's context propagation (AsyncLocalStorage on Node 20) pays for one by one.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('API-Version', '1');
    reply.header('Request-Id', request.id);
    done(null, payload);
  });

  // Outbox rows this process commits are handed to Temporal right after the commit; the worker's
  // reconciler hands off whatever this misses (Temporal down, process killed).
  // The first attempt of a delivery this process writes is made here too (engine/deliveries/first-attempts.ts).
  const secrets = createSecretBox(config.secretsKey);
  const engine = createEngine({ db, config, secrets, client: deps.temporal.client, log: (msg, err) => app.log.warn({ err }, msg) });
  app.addHook('onClose', () => engine.handOff.idle());
  // The one place repositories and services are built; each route module gets only the services it calls.
  const repositories = createRepositories(db);
  // One LISTEN connection for every live run stream of this process (opened when the first stream opens).
  const runEventsListener = createNotificationListener({
    connectionString: config.databaseUrl,
    channel: 'run_events',
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    log: (msg, err) => app.log.warn({ err }, msg),
  });
  const services = createServices({
    config, db, repositories, secrets, engine, temporal: deps.temporal.connection, temporalClient: deps.temporal.client, runEventsListener,
    log: (msg, err) => app.log.warn({ err }, msg),
  });
  // Open streams end before the server waits for its connections to close; then the listener goes.
  app.addHook('preClose', async () => services.runEvents.closeAll());
  app.addHook('onClose', () => runEventsListener.close());
  const publicBaseUrl = config.http.publicBaseUrl;
  // METRICS_ENABLED=false: no /metrics, and nothing measured per request.
  const metrics = config.metrics.enabled ? createMetricsService({
        metrics: repositories.metrics,
        pollers: () => taskQueuePollers(deps.temporal.client),
        log: (msg, err) => app.log.warn({ err }, msg),
        snapshotMs: config.metrics.snapshotMs,
      }) : null;
  if (metrics) {
    measureRequests(app, metrics);
    app.addHook('onClose', () => metrics.idle());
  }

  // Only the console's refresh cookie is read (api/console-session.ts); nothing is signed with it.
  await app.register(cookie);
  await registerDocs(app);
  const authRateLimit = await registerAuthRateLimit(app, {
    guards: repositories.guards,
    max: config.auth.rateLimitMax,
    windowMs: config.auth.rateLimitWindowMs,
  });

  healthRoutes(app, services.health);
  // One line at start-up when Temporal cannot be reached, naming why (a refused TLS handshake, a server
  // certificate not trusted, credentials refused); the API serves meanwhile, work waits in the outbox.
  app.addHook('onListen', async () => {
    void services.health.diagnoseTemporal().then((problem) => {
      if (problem) app.log.warn(problem);
    });
  });
  if (metrics) metricsRoute(app, { metrics, token: config.metrics.token });
  // Public hook endpoints: no credential; each checks its own secret (signature or X-Trigger-Token).
  await app.register(async (hooks) => hookRoutes(hooks, { hooks: services.hooks }));
  await app.register(async (api) => {
    requireAuthentication(api, services.auth);
    // Before any work of the route: an account over its share is refused at once (docs/api.md § Requests in progress).
    shareRequestTurns(api, config.requestTurns);
    // Before the idempotency hook: a URL's lookup must not wait holding the connection its transaction takes.
    runPreflights(api, { guards: repositories.guards });
    supportIdempotencyKeys(api, {
      db,
      guards: repositories.guards,
      secrets,
      fingerprintKey: createHmac('sha256', config.secretsKey).update('idempotency-fingerprint').digest(),
    });
    const scoped = api.withTypeProvider<ZodTypeProvider>();
    authRoutes(scoped, { auth: services.auth, rateLimit: authRateLimit, publicBaseUrl, refreshTokenTtlSeconds: config.auth.refreshTokenTtlDays * 86_400 });
    accountRoutes(scoped, { account: services.account, audit: services.audit, publicBaseUrl });
    agentRoutes(scoped, { agents: services.agents, transfer: services.transfer, publicBaseUrl });
    connectorRoutes(scoped, { connectors: services.connectors, publicBaseUrl });
    toolRoutes(scoped, { tools: services.tools, toolFunctions: services.toolFunctions, publicBaseUrl });
    webhookRoutes(scoped, { webhooks: services.webhooks, publicBaseUrl });
    triggerRoutes(scoped, { triggers: services.triggers, publicBaseUrl });
    teamRoutes(scoped, { team: services.team, publicBaseUrl });
    fireRoutes(scoped, { fires: services.fires, publicBaseUrl });
    scheduleTruthRoutes(scoped, { scheduleTruth: services.scheduleTruth, publicBaseUrl });
    fireOutcomeRoutes(scoped, { fireOutcomes: services.fireOutcomes, publicBaseUrl });
    deliveryRoutes(scoped, {
      deliveries: services.deliveries,
      publicBaseUrl,
      retriesPerMinute: config.webhooks.retriesPerMinute,
      recoverInterval: config.webhooks.recoverInterval.text,
      maxAttempts: config.webhooks.maxAttempts,
    });
    webhookStatsRoutes(scoped, { webhookStats: services.webhookStats });
    settingsRoutes(scoped, {
      settings: { agentCreateCost: config.billing.agentCreateCost, temporal: { namespace: config.temporal.namespace, uiUrl: config.temporal.uiUrl } },
    });
    mcpRoutes(scoped, { agents: services.agents, runs: services.runs, runWaits: services.runWaits, approvals: services.approvals, publicBaseUrl });
    approvalRoutes(scoped, { approvals: services.approvals, publicBaseUrl });
    rerunRoutes(scoped, { reruns: services.reruns, recoverInterval: config.webhooks.recoverInterval.text });
    runRoutes(scoped, {
      runs: services.runs,
      runEvents: services.runEvents,
      heartbeatMs: config.runEvents.heartbeatMs,
      streams: config.runEvents,
      publicBaseUrl,
    });
  });
  await consoleSite.register(app);

  return app;
}
