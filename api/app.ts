import { createHmac } from 'node:crypto';
import Fastify, { type FastifyServerOptions } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from '../lib/config';
import { createHandOff } from '../lib/handoff';
import type { TemporalClient } from '../lib/temporal-client';
import { createSecretBox } from '../lib/secrets';
import type { Db } from '../db/pool';
import { createAccountsRepository } from '../db/repositories/accounts';
import { createAgentsRepository } from '../db/repositories/agents';
import { createCredentialsRepository } from '../db/repositories/credentials';
import { createRequestGuardsRepository } from '../db/repositories/request-guards';
import { createUsersRepository } from '../db/repositories/users';
import { fastifyTrustProxy } from './client-address';
import { registerAuthRateLimit } from './plugins/auth-rate-limit';
import { guardBodies } from './plugins/body-guard';
import { requireAuthentication } from './plugins/authenticate';
import { registerDocs } from './plugins/docs';
import { installErrorHandling } from './plugins/error-handler';
import { supportIdempotencyKeys } from './plugins/idempotency';
import { registerSecurityHeaders } from './plugins/security-headers';
import { responseSerializerCompiler } from './plugins/serializer';
import { accountRoutes } from './routes/account';
import { agentRoutes } from './routes/agents';
import { authRoutes } from './routes/auth';
import { connectorRoutes } from './routes/connectors';
import { deliveryRoutes } from './routes/deliveries';
import { fireRoutes } from './routes/fires';
import { hookRoutes } from './routes/hooks';
import { healthRoutes } from './routes/health';
import { runRoutes } from './routes/runs';
import { teamRoutes } from './routes/team';
import { toolRoutes } from './routes/tools';
import { triggerRoutes } from './routes/triggers';
import { webhookRoutes } from './routes/webhooks';
import { createAccountService } from './services/account-service';
import { createAgentService } from './services/agent-service';
import { createAuthService } from './services/auth-service';
import { createHealthService } from './services/health-service';
import { createTokenService } from './services/tokens';
import type { ResourceContext } from './context';
import './types';

export interface AppDeps {
  config: Config;
  db: Db;
  /** The process's one Temporal client (lazy: the API starts even while Temporal is down). */
  temporal: TemporalClient;
  logger?: FastifyServerOptions['logger'];
}

/** Builds the API without listening; the server entry and the tests both use it. */
export async function buildApp(deps: AppDeps) {
  const { config, db } = deps;
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel },
    trustProxy: fastifyTrustProxy(config.http.trustProxy),
    bodyLimit: 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();
  await registerSecurityHeaders(app);
  // JSON only: a text/plain body answers 415 instead of reaching validation as a string.
  app.removeContentTypeParser(['text/plain']);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializerCompiler);
  installErrorHandling(app);
  guardBodies(app);
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('API-Version', '1');
    return payload;
  });

  const users = createUsersRepository(db);
  const accounts = createAccountsRepository(db);
  const credentials = createCredentialsRepository(db);
  const guards = createRequestGuardsRepository(db);
  const agentsRepo = createAgentsRepository(db);

  const tokens = createTokenService({ jwtSecret: config.auth.jwtSecret, accessTokenTtlSeconds: config.auth.accessTokenTtlSeconds });
  const auth = createAuthService({
    db, users, accounts, credentials, tokens,
    initialBalance: config.billing.initialBalance,
    refreshTokenTtlDays: config.auth.refreshTokenTtlDays,
  });
  const account = createAccountService({ accounts });
  // Outbox rows this process commits are handed to Temporal right after the commit; the worker's
  // reconciler hands off whatever this misses (Temporal down, process killed).
  const handOff = createHandOff({ db, client: deps.temporal.client, log: (msg, err) => app.log.warn({ err }, msg) });
  app.addHook('onClose', () => handOff.idle());
  const agents = createAgentService({ db, agents: agentsRepo, accounts, handOff, agentCreateCost: config.billing.agentCreateCost });
  const health = createHealthService({ db, temporal: deps.temporal.connection });
  const publicBaseUrl = config.http.publicBaseUrl;
  const secrets = createSecretBox(config.secretsKey);
  const resources: ResourceContext = { db, config, secrets, agents: agentsRepo, publicBaseUrl, handOff };

  await registerDocs(app, publicBaseUrl);
  const authRateLimit = await registerAuthRateLimit(app, {
    guards,
    max: config.auth.rateLimitMax,
    windowMs: config.auth.rateLimitWindowMs,
  });

  healthRoutes(app, health);
  // Public hook endpoints: no credential; each checks its own secret (signature or X-Trigger-Token).
  await app.register(async (hooks) => hookRoutes(hooks, resources));
  await app.register(async (api) => {
    requireAuthentication(api, auth);
    supportIdempotencyKeys(api, guards, secrets, createHmac('sha256', config.secretsKey).update('idempotency-fingerprint').digest());
    const scoped = api.withTypeProvider<ZodTypeProvider>();
    authRoutes(scoped, { auth, rateLimit: authRateLimit, publicBaseUrl });
    accountRoutes(scoped, { account, publicBaseUrl });
    agentRoutes(scoped, { agents, publicBaseUrl });
    connectorRoutes(scoped, resources);
    toolRoutes(scoped, resources);
    webhookRoutes(scoped, resources);
    triggerRoutes(scoped, resources);
    teamRoutes(scoped, resources);
    fireRoutes(scoped, resources);
    deliveryRoutes(scoped, resources);
    runRoutes(scoped, resources);
  });

  return app;
}
