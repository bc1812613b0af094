import type { Client, Connection } from '@temporalio/client';
import type { NotificationListener } from '../../db/notifications';
import type { Db } from '../../db/pool';
import { createAccountsRepository } from '../../db/repositories/accounts';
import { createAgentsRepository } from '../../db/repositories/agents';
import { createApprovalsRepository } from '../../db/repositories/approvals';
import { createAuditRepository } from '../../db/repositories/audit';
import { createConnectorsRepository } from '../../db/repositories/connectors';
import { createCredentialsRepository } from '../../db/repositories/credentials';
import { createDeliveriesRepository } from '../../db/repositories/deliveries';
import { createFireOutcomesRepository } from '../../db/repositories/fire-outcomes';
import { createFireRateRepository, createFiresRepository } from '../../db/repositories/fires';
import { createHooksRepository } from '../../db/repositories/hooks';
import { createMetricsRepository } from '../../db/repositories/metrics';
import { createScheduleHistoryRepository } from '../../db/repositories/schedule-history';
import { createWebhookStatsRepository } from '../../db/repositories/webhook-stats';
import { createQuotasRepository } from '../../db/repositories/quotas';
import { createRecoveriesRepository } from '../../db/repositories/recoveries';
import { createRunsRepository } from '../../db/repositories/runs';
import { createRunStepsRepository } from '../../db/repositories/run-steps';
import { createRunStreamLeasesRepository } from '../../db/repositories/run-stream-leases';
import { createRequestGuardsRepository } from '../../db/repositories/request-guards';
import { createTeamRepository } from '../../db/repositories/team';
import { createToolsRepository } from '../../db/repositories/tools';
import { createTriggersRepository } from '../../db/repositories/triggers';
import { createUsersRepository } from '../../db/repositories/users';
import { createWebhooksRepository } from '../../db/repositories/webhooks';
import type { Config } from '../../lib/config';
import type { Engine } from '../../engine';
import type { SecretBox } from '../../lib/secrets';
import { createAccountService } from './account-service';
import { createAgentService } from './agent-service';
import { createAgentTransferService } from './agent-transfer';
import { createAuditTrail } from './audit-trail';
import { createAuthService } from './auth-service';
import { createConnectorService } from './connector-service';
import { createDeliveryService } from './delivery-service';
import { createFireOutcomesService } from './fire-outcomes-service';
import { createFireService } from './fire-service';
import { createHealthService } from './health-service';
import { createHookService } from './hook-service';
import { createRunEventService } from './run-events';
import { createRerunService } from './rerun-service';
import { createRunService } from './run-service';
import { createApprovalService } from './approval-service';
import { createScheduleTruthService } from './schedule-truth-service';
import { createWebhookStatsService } from './webhook-stats-service';
import { createTeamService } from './team-service';
import { createTokenService } from './tokens';
import { createTargetChecks } from './target-checks';
import { createToolFunctionService } from './tool-functions';
import { createRunWaits } from './run-waits';
import { createToolService } from './tool-service';
import { createTriggerService } from './trigger-service';
import { createWebhookService } from './webhook-service';

/** Every repository the API uses, one of each over the process's pool. */
export function createRepositories(db: Db) {
  return {
    accounts: createAccountsRepository(db),
    agents: createAgentsRepository(db),
    approvals: createApprovalsRepository(db),
    audit: createAuditRepository(db),
    connectors: createConnectorsRepository(db),
    credentials: createCredentialsRepository(db),
    deliveries: createDeliveriesRepository(db),
    fires: createFiresRepository(db),
    fireOutcomes: createFireOutcomesRepository(db),
    fireRate: createFireRateRepository(db),
    guards: createRequestGuardsRepository(db),
    hooks: createHooksRepository(db),
    metrics: createMetricsRepository(db),
    scheduleHistory: createScheduleHistoryRepository(db),
    webhookStats: createWebhookStatsRepository(db),
    quotas: createQuotasRepository(db),
    recoveries: createRecoveriesRepository(db),
    runs: createRunsRepository(db),
    runSteps: createRunStepsRepository(db),
    runStreamLeases: createRunStreamLeasesRepository(db),
    team: createTeamRepository(db),
    tools: createToolsRepository(db),
    triggers: createTriggersRepository(db),
    users: createUsersRepository(db),
    webhooks: createWebhooksRepository(db),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;

export interface ServiceDeps {
  config: Config;
  db: Db;
  repositories: Repositories;
  secrets: SecretBox;
  /**
   * The process's engine (engine/index.ts): every write that queues work for it — events, runs, fires,
   * schedule syncs — is one of its units of work (`engine.transaction`), which hands the work off after the commit.
   */
  engine: Engine;
  /** The Temporal connection, for the health check only. */
  temporal: Connection;
  /** The process's Temporal client: schedule truth asks it when fire workflows ended. */
  temporalClient: Client;
  /** The process's one LISTEN connection for run events (live run streams). */
  runEventsListener: NotificationListener;
  /** Warnings of work done outside any request (live run streams' checks). */
  log: (msg: string, err: unknown) => void;
}

/** Every service of the API, each built once from its dependencies; buildApp hands each route module its own. */
export function createServices(deps: ServiceDeps) {
  const { config, db, repositories: repos, secrets, engine } = deps;
  const { publicBaseUrl } = config.http;
  const { quotas } = repos;
  // Every URL check of every service (webhook urls, tool endpoints), bounded per request, account and process.
  const targetChecks = createTargetChecks({ allowPrivateTargets: config.webhooks.allowPrivateTargets, dnsServers: config.network.dnsServers });

  // Every write of every service records itself here, in its own transaction.
  const audit = createAuditTrail({ audit: repos.audit, team: repos.team });
  const fireAdmission = { engine };
  const tokens = createTokenService({ jwtSecret: config.auth.jwtSecret, accessTokenTtlSeconds: config.auth.accessTokenTtlSeconds });
  const services = {
    auth: createAuthService({
      db,
      users: repos.users,
      accounts: repos.accounts,
      credentials: repos.credentials,
      team: repos.team,
      tokens,
      initialBalance: config.billing.initialBalance,
      refreshTokenTtlDays: config.auth.refreshTokenTtlDays,
    }),
    account: createAccountService({ db, accounts: repos.accounts }),
    audit,
    agents: createAgentService({ db, agents: repos.agents, accounts: repos.accounts, engine, audit, agentCreateCost: config.billing.agentCreateCost, allowedModels: config.model.allowed }),
    health: createHealthService({ db, temporal: deps.temporal, temporalSettings: config.temporal.connection, log: deps.log }),
    connectors: createConnectorService({
      db,
      agents: repos.agents,
      connectors: repos.connectors,
      secrets,
      quotas,
      quota: config.quotas.connectorsPerAgent,
      audit,
    }),
    tools: createToolService({
      db,
      agents: repos.agents,
      tools: repos.tools,
      secrets,
      targetChecks,
      quotas,
      quota: config.quotas.toolsPerAgent,
      audit,
    }),
    toolFunctions: createToolFunctionService({ tools: repos.tools, secrets, config }),
    webhooks: createWebhookService({
      db,
      webhooks: repos.webhooks,
      secrets,
      publicBaseUrl,
      targetChecks,
      quotas,
      quota: config.quotas.webhooksPerAccount,
      audit,
    }),
    deliveries: createDeliveryService({
      db,
      webhooks: repos.webhooks,
      deliveries: repos.deliveries,
      recoveries: repos.recoveries,
      engine,
      audit,
      guards: repos.guards,
      retriesPerMinute: config.webhooks.retriesPerMinute,
      recoverInterval: config.webhooks.recoverInterval,
      maxAttempts: config.webhooks.maxAttempts,
    }),
    triggers: createTriggerService({
      db,
      triggers: repos.triggers,
      agents: repos.agents,
      secrets,
      publicBaseUrl,
      engine,
      quotas,
      quota: config.quotas.triggersPerAccount,
      audit,
    }),
    fires: createFireService({ triggers: repos.triggers, fires: repos.fires, admission: fireAdmission, audit }),
    webhookStats: createWebhookStatsService({ webhooks: repos.webhooks, stats: repos.webhookStats }),
    scheduleTruth: createScheduleTruthService({
      triggers: repos.triggers,
      history: repos.scheduleHistory,
      retentionDays: config.retention.days,
      graceMs: config.missedFires.graceMs,
      temporal: deps.temporalClient,
    }),
    team: createTeamService({ db, team: repos.team, audit, invitationTtlMs: config.team.invitationTtl.ms }),
    runs: createRunService({ db, agents: repos.agents, runs: repos.runs, runSteps: repos.runSteps, engine, audit, temporal: deps.temporalClient, config }),
    reruns: createRerunService({ db, agents: repos.agents, runs: repos.runs, engine, audit, config, recoverInterval: config.webhooks.recoverInterval }),
    approvals: createApprovalService({ approvals: repos.approvals, runs: repos.runs, engine, audit }),
    runEvents: createRunEventService({
      db,
      approvals: repos.approvals,
      runs: repos.runs,
      runSteps: repos.runSteps,
      listener: deps.runEventsListener,
      leases: repos.runStreamLeases,
      heartbeatMs: config.runEvents.heartbeatMs,
      perUser: config.runEvents.perUser,
      perAccount: config.runEvents.perAccount,
      perProcess: config.runEvents.perProcess,
      checkMs: config.runEvents.checkMs,
      log: deps.log,
    }),
    // MCP's run_agent waits on the live streams' notifications: at most 50 waits per account per process (more answer without waiting).
    runWaits: createRunWaits({ runs: repos.runs, listener: deps.runEventsListener, perAccount: 50, recheckMs: 5_000 }),
    hooks: createHookService({
      db,
      hooks: repos.hooks,
      secrets,
      engine,
      guards: repos.guards,
      rateLimitPerSecond: config.hooks.rateLimitPerSecond,
      fireAdmission,
    }),
  };
  return {
    ...services,
    fireOutcomes: createFireOutcomesService({
      triggers: repos.triggers,
      fires: repos.fires,
      outcomes: repos.fireOutcomes,
      scheduleTruth: services.scheduleTruth,
    }),
    transfer: createAgentTransferService({
      agentsRepository: repos.agents,
      toolsRepository: repos.tools,
      connectorsRepository: repos.connectors,
      triggersRepository: repos.triggers,
      agents: services.agents,
      tools: services.tools,
      connectors: services.connectors,
      triggers: services.triggers,
      audit,
      targetChecks,
      toolsPerAgent: config.quotas.toolsPerAgent,
      connectorsPerAgent: config.quotas.connectorsPerAgent,
    }),
  };
}
