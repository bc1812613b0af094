import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { databaseUrlProblem, withSslEnvironment } from './database-url';
import { DAY_MS, parseDuration, tryParseDuration } from './durations';

/**
 * The one configuration module (README § Configuration). Every process parses the environment once at start-up;
 * a bad value stops it with a message naming the variable.
 */

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const durationList = z
  .string()
  .regex(/^\s*\d+(ms|s|m|h|d)\s*(,\s*\d+(ms|s|m|h|d)\s*)*$/, 'must be a comma-separated list of durations like 0s,5s,5m,2h');

/** One duration as lib/durations.ts writes it ("5d", "1h30m", "2s"), more than zero; kept as written (loadConfig adds its ms). */
const duration = z
  .string()
  .trim()
  .superRefine((text, ctx) => {
    const parsed = tryParseDuration(text);
    if ('error' in parsed) ctx.addIssue({ code: 'custom', message: parsed.error });
    else if (parsed.ms <= 0) ctx.addIssue({ code: 'custom', message: 'must be more than zero' });
  });

const base64Key32 = z
  .string()
  .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes encoded as base64');

const httpUrl = z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, ''));

const port = z.coerce.number().int().min(0).max(65535);

/** proxy-addr's named ranges, which Fastify accepts in its list form. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

const trustsEveryProxy = (value: string) =>
  `${value} would trust every X-Forwarded-For, whose left-most entries the client writes itself; set the number of ` +
  'proxies in front of the API (e.g. 1) or their addresses or CIDRs (e.g. 10.0.0.0/8,192.168.1.7)';

/** A dotted-quad IPv4 or an IPv6 address, optionally with a /prefix (ipaddr.isValid alone also takes `10.1`). */
function isAddressOrCidr(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  if (rest.length > 0) return false;
  const bits = ipaddr.IPv4.isValidFourPartDecimal(address) ? 32 : ipaddr.IPv6.isValid(address) ? 128 : 0;
  if (bits === 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
}

/** A CIDR that covers every address: the same as `true`. */
function isEveryAddress(entry: string): boolean {
  return /\/0+$/.test(entry);
}

/**
 * Which peers may tell us the client's address (README § Configuration, TRUST_PROXY): `false` (none: the socket's address), a hop
 * count (that many proxies in front of the API), or the proxies' addresses/CIDRs. Never everyone: the
 * left-most X-Forwarded-For entry is whatever the client sent.
 */
const trustProxy = z
  .string()
  .trim()
  .transform((value, ctx): TrustProxy => {
    if (/^(false|0)$/i.test(value)) return false;
    if (/^\d{1,2}$/.test(value)) return Number(value);
    const entries = value.split(',').map((e) => e.trim());
    if (/^(true|yes|on|\*)$/i.test(value) || entries.some(isEveryAddress)) {
      ctx.addIssue({ code: 'custom', message: trustsEveryProxy(value) });
      return z.NEVER;
    }
    const bad = entries.filter((e) => !PROXY_RANGE_NAMES.includes(e) && !isAddressOrCidr(e));
    if (bad.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `must be false, a hop count, or a comma-separated list of proxy addresses or CIDRs (not ${bad.map((e) => JSON.stringify(e)).join(', ')})`,
      });
      return z.NEVER;
    }
    return entries;
  });

/** One nameserver as dns.Resolver#setServers takes it: `1.1.1.1`, `1.1.1.1:5353`, `::1`, `[::1]:5353`. */
function isNameserver(entry: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  const [address, port] = bracketed ? [bracketed[1]!, bracketed[2]] : /^[\d.]+:\d{1,5}$/.test(entry) ? entry.split(':') : [entry, undefined];
  const valid = ipaddr.IPv4.isValidFourPartDecimal(address!) || (ipaddr.IPv6.isValid(address!) && !address!.includes('.'));
  return valid && (port === undefined || (Number(port) >= 1 && Number(port) <= 65535));
}

/** DNS_SERVERS: a comma-separated list of nameservers; unset: the system's (dns.getServers(), from /etc/resolv.conf). */
const nameservers = z
  .string()
  .trim()
  .transform((value, ctx) => {
    const entries = value.split(',').map((e) => e.trim());
    const bad = entries.filter((e) => !isNameserver(e));
    if (bad.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a comma-separated list of nameserver addresses, each an IP with an optional port (1.1.1.1, 127.0.0.1:5353, [::1]:53), not ${bad.map((e) => JSON.stringify(e)).join(', ')}`,
      });
      return z.NEVER;
    }
    return entries;
  });

/** libpq's sslmode values that pg can honour ('allow', plain text first, it cannot). */
const SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
const sslMode = z.enum(SSL_MODES, { message: `must be one of ${SSL_MODES.join(', ')}` });

const envSchema = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// connection string'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1_000).default(10),
  PGSSLMODE: sslMode.optional(),
  PGSSLROOTCERT: z.string().min(1).optional(),
  PGSSLCERT: z.string().min(1).optional(),
  PGSSLKEY: z.string().min(1).optional(),
  TEMPORAL_ADDRESS: z.string().regex(/^[^\s:]+:\d+$/, 'must be host:port'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_UI_URL: httpUrl.optional(),
  PORT: port.default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).default('http://localhost:3000').transform((u) => u.replace(/\/+$/, '')),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters'),
  SECRETS_KEY: base64Key32,
  INITIAL_BALANCE: z.coerce.number().int().min(0).default(1000),
  AGENT_CREATE_COST: z.coerce.number().int().min(0).default(100),
  AUTH_RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(10),
  AUTH_RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(1000).default(900_000),
  TRUST_PROXY: trustProxy.default(false),
  WEBHOOK_RETRY_SCHEDULE: durationList.default('0s,5s,5m,30m,2h,5h,10h,10h'),
  WEBHOOK_DISABLE_AFTER: duration.default('5d'),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  ALLOW_PRIVATE_TARGETS: booleanFlag.default(false),
  DNS_SERVERS: nameservers.optional(),
  RECONCILE_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(2_000),
  SCHEDULE_SWEEP_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(60_000),
  TOOL_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  CHAIN_FIRE_BUDGET: z.coerce.number().int().min(1).max(100_000).default(100),
  FIRES_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
  DELIVERY_CONCURRENCY_PER_WEBHOOK: z.coerce.number().int().min(1).max(1_000).default(10),
  DELIVERY_WORKER_SLOTS: z.coerce.number().int().min(1).max(10_000).default(100),
  WORKER_WORKFLOW_TASK_SLOTS: z.coerce.number().int().min(2).max(1_000).default(40),
  DELIVERY_FIRST_ATTEMPT_WAIT_MS: z.coerce.number().int().min(0).max(4_000).default(2_000),
  DELIVERY_FIRST_ATTEMPT_WAITERS: z.coerce.number().int().min(0).max(100_000).default(1_000),
  RECOVERY_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(100),
  RECOVER_INTERVAL: duration
    .refine((text) => {
      const parsed = tryParseDuration(text);
      return 'error' in parsed || parsed.ms <= 86_400_000;
    }, 'must be at most 1d')
    .default('1m'),
  DELIVERY_RETRIES_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(60),
  RUN_CONCURRENCY_PER_ACCOUNT: z.coerce.number().int().min(1).max(1_000).default(10),
  RUN_BACKLOG_PER_SECOND: z.coerce.number().min(0).max(100_000).default(5),
  RUN_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(300_000),
  COINGECKO_BASE_URL: httpUrl.default('https://api.coingecko.com/api/v3'),
  DEXSCREENER_BASE_URL: httpUrl.default('https://api.dexscreener.com'),
  POLYMARKET_BASE_URL: httpUrl.default('https://gamma-api.polymarket.com'),
  QUOTA_TRIGGERS: z.coerce.number().int().min(0).default(500),
  QUOTA_WEBHOOKS: z.coerce.number().int().min(0).default(100),
  QUOTA_TOOLS_PER_AGENT: z.coerce.number().int().min(0).default(50),
  QUOTA_CONNECTORS_PER_AGENT: z.coerce.number().int().min(0).default(20),
  HOOK_RATE_LIMIT: z.coerce.number().int().min(1).default(50),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(30),
  METRICS_ENABLED: booleanFlag.default(true),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').max(256).optional(),
  METRICS_SNAPSHOT_MS: z.coerce.number().int().min(100).max(5_000).default(5_000),
  MISSED_FIRE_GRACE_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(60_000),
  MODEL_BASE_URL: httpUrl.optional(),
  MODEL_API_KEY: z.string().max(4096).regex(/^[^\s]+$/, 'must not contain whitespace').optional(),
  MODEL_NAME: z.string().trim().min(1).max(200).optional(),
  MODEL_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(120_000),
  MODEL_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  MODEL_TOKENS_PER_DAY: z.coerce.number().int().min(1).max(1_000_000_000_000).default(2_000_000),
  MODEL_ALLOWED: z
    .string()
    .transform((v) => v.split(',').map((m) => m.trim()).filter((m) => m !== ''))
    .refine((list) => list.length > 0, 'must name at least one model (comma-separated), or be unset to allow any')
    .refine((list) => list.every((m) => m.length <= 200), 'each model name must be at most 200 characters')
    .optional(),
  MODEL_CONTEXT_MAX_BYTES: z.coerce.number().int().min(4_096).max(67_108_864).default(262_144),
  RUN_EVENTS_HEARTBEAT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  INVITATION_TTL: duration
    .refine((text) => {
      const parsed = tryParseDuration(text);
      return !('ms' in parsed) || parsed.ms <= 365 * DAY_MS;
    }, 'must be at most 365d')
    .default('7d'),
  RUN_STREAMS_PER_USER: z.coerce.number().int().min(1).max(1_000).default(10),
  RUN_STREAMS_PER_PROCESS: z.coerce.number().int().min(1).max(100_000).default(200),
  RUN_STREAMS_CHECK_MS: z.coerce.number().int().min(100).max(30_000).default(10_000),
});

export type Env = z.input<typeof envSchema>;

/** Every variable the configuration reads, with its parser and default (the README's configuration table is checked against it). */
export const configVariables = envSchema.shape;

/** `false`, a hop count, or trusted proxy addresses/CIDRs (see `trustProxy` above). */
export type TrustProxy = false | number | string[];

export interface Config {
  /**
   * DATABASE_URL as every connection of the process opens it (db/pool.ts, db/migrate.ts, the LISTEN
   * connection): PGSSLMODE, PGSSLROOTCERT, PGSSLCERT and PGSSLKEY added as `sslmode=`… where the URL names
   * none (the URL wins, as in libpq), and read with libpq's meaning of sslmode (lib/database-url.ts).
   */
  databaseUrl: string;
  /** DATABASE_POOL_SIZE: the most connections this process's pool opens (one more for LISTEN in the API). */
  databasePoolSize: number;
  /** uiUrl: the Temporal UI the console links workflows to (null: no links). */
  temporal: { address: string; namespace: string; uiUrl: string | null };
  http: { port: number; host: string; publicBaseUrl: string; trustProxy: TrustProxy };
  auth: { jwtSecret: string; accessTokenTtlSeconds: number; refreshTokenTtlDays: number; rateLimitMax: number; rateLimitWindowMs: number };
  secretsKey: Buffer;
  billing: { initialBalance: number; agentCreateCost: number };
  /**
   * concurrencyPerWebhook: delivery attempts in flight per webhook, across every worker; workerSlots:
   * attempts in flight per worker process, on the delivery task queue (docs/architecture.md § Limits and fairness).
   */
  webhooks: {
    retrySchedule: string[];
    timeoutMs: number;
    allowPrivateTargets: boolean;
    concurrencyPerWebhook: number;
    workerSlots: number;
    /**
     * A first attempt that finds no slot at its webhook waits in its process while the webhook's line
     * moves: once no slot came back for `timeoutMs` and this long more, its workflow takes over
     * (lib/first-attempts.ts); at most `firstAttemptWaiters` wait at once in a process, at most half of
     * them of one account.
     */
    firstAttemptWaitMs: number;
    firstAttemptWaiters: number;
    /** WEBHOOK_DISABLE_AFTER: an outgoing webhook whose every attempt failed for this long is disabled (as written, and in ms). */
    disableAfter: { text: string; ms: number };
    /** Failed deliveries a recovery gives a new generation per batch (one activity, one transaction). */
    recoveryBatchSize: number;
    /**
     * RECOVER_INTERVAL: at most one recovery per webhook is asked for per interval, and a delivery a
     * recovery re-sent less than an interval ago is not re-sent by the next (as written, and in ms).
     */
    recoverInterval: { text: string; ms: number };
    /** Manual retries per webhook per minute (DELIVERY_RETRIES_PER_MINUTE), across every API process. */
    retriesPerMinute: number;
  };
  /** Fires one root event's chain may make in all, and fires per account per minute (docs/architecture.md § Limits and fairness). */
  fires: { chainBudget: number; perMinute: number };
  /** The reconciler's outbox drain interval and its schedule sweep interval (worker). */
  /**
   * `workflowTaskSlots`: workflow tasks the main worker takes at once. Its one workflow thread works them
   * one after another, so more only queue inside the process, where every account waits in the same line;
   * fewer leave the rest in Temporal's task queue, where the fairness keys take accounts in turn.
   */
  engine: { reconcileIntervalMs: number; scheduleSweepMs: number; workflowTaskSlots: number };
  /**
   * How webhook and tool targets are resolved (lib/network.ts): the nameservers asked, null for the
   * system's (dns.getServers(), read from /etc/resolv.conf); /etc/hosts is read first either way.
   */
  network: { dnsServers: string[] | null };
  /** The default executor's tools: per-call time limit and the data tools' public API base URLs. */
  tools: { timeoutMs: number; coinGeckoBaseUrl: string; dexScreenerBaseUrl: string; polymarketBaseUrl: string };
  /** docs/api.md § Quotas and charges: how many of each resource an account (or an agent) may hold. */
  quotas: { triggersPerAccount: number; webhooksPerAccount: number; toolsPerAgent: number; connectorsPerAgent: number };
  /** Requests per second each public hook accepts (docs/api.md § Rate limits). */
  hooks: { rateLimitPerSecond: number };
  /**
   * Agent runs: how many of one account's runs may be running at once, how long one may run, and how
   * many of its parked runs (its backlog) each worker process gives a workflow per second (0: no pace).
   */
  runs: { concurrencyPerAccount: number; timeoutMs: number; backlogPerSecond: number };
  /**
   * The language model agents think with (an OpenAI Chat Completions endpoint): null baseUrl means none
   * is configured, and runs keep the tool executor. apiKey is a secret: never logged, never shown.
   * timeoutMs bounds each request; maxRetries is how often one request is retried (429, 5xx, timeouts).
   */
  model: {
    baseUrl: string | null;
    apiKey: string | null;
    name: string | null;
    timeoutMs: number;
    maxRetries: number;
    /** Prompt + completion tokens one account may spend per UTC day (MODEL_TOKENS_PER_DAY). */
    tokensPerDay: number;
    /** The models an agent may name (MODEL_ALLOWED); null: any. */
    allowed: string[] | null;
    /** The largest request body (JSON bytes) a model call may send (MODEL_CONTEXT_MAX_BYTES). */
    contextMaxBytes: number;
  };
  /**
   * Live run events (SSE): the interval of the heartbeat comment on an idle stream; streams open at once per
   * user (across every API process) and per process; how often a process renews its streams' places and
   * checks again that each caller may still read the run (a stream that lost access ends within this).
   */
  runEvents: { heartbeatMs: number; perUser: number; perProcess: number; checkMs: number };
  /** INVITATION_TTL: how long an invitation stays open to be accepted (as written, and in ms). */
  team: { invitationTtl: { text: string; ms: number } };
  logLevel: string;
  /** Events, fires, runs, deliveries, hook receipts and the rest README Retention lists, older than this, are deleted. */
  retention: { days: number };
  /**
   * GET /metrics (README § Operating it): served at all, the bearer token it asks for (none: open; required
   * when the API listens beyond loopback, see metricsTokenProblem), and how old the engine's figures read
   * from Postgres may be (at most one read per this many ms, however many scrape).
   */
  metrics: { enabled: boolean; token: string | null; snapshotMs: number };
  /**
   * A schedule time with no fire and no reason counts as missed once its trigger's catch-up window and this
   * grace have passed (a fire may be made that late: Temporal catches up within the window).
   */
  missedFires: { graceMs: number };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings mean "not set", as in most shells' `VAR= cmd`.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = i.path.join('.');
      const problem = i.code === 'invalid_type' && cleaned[name] === undefined ? 'is required' : i.message;
      return `  ${name}: ${problem}`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (e.MODEL_NAME && e.MODEL_ALLOWED && !e.MODEL_ALLOWED.includes(e.MODEL_NAME)) {
    throw new ConfigError(`Invalid configuration:\n  MODEL_NAME: ${e.MODEL_NAME} is not among MODEL_ALLOWED (${e.MODEL_ALLOWED.join(', ')})`);
  }
  const databaseUrl = withSslEnvironment(e.DATABASE_URL, { sslmode: e.PGSSLMODE, sslrootcert: e.PGSSLROOTCERT, sslcert: e.PGSSLCERT, sslkey: e.PGSSLKEY });
  const databaseProblem = databaseUrlProblem(databaseUrl, SSL_MODES);
  if (databaseProblem) throw new ConfigError(`Invalid configuration:\n  ${databaseProblem}`);
  return {
    databaseUrl,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    temporal: { address: e.TEMPORAL_ADDRESS, namespace: e.TEMPORAL_NAMESPACE, uiUrl: e.TEMPORAL_UI_URL ?? null },
    http: { port: e.PORT, host: e.HOST, publicBaseUrl: e.PUBLIC_BASE_URL, trustProxy: e.TRUST_PROXY },
    auth: {
      jwtSecret: e.JWT_SECRET,
      accessTokenTtlSeconds: 15 * 60,
      refreshTokenTtlDays: 30,
      rateLimitMax: e.AUTH_RATE_LIMIT_MAX,
      rateLimitWindowMs: e.AUTH_RATE_LIMIT_WINDOW_MS,
    },
    secretsKey: Buffer.from(e.SECRETS_KEY, 'base64'),
    billing: { initialBalance: e.INITIAL_BALANCE, agentCreateCost: e.AGENT_CREATE_COST },
    webhooks: {
      retrySchedule: e.WEBHOOK_RETRY_SCHEDULE.split(',').map((s) => s.trim()),
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      allowPrivateTargets: e.ALLOW_PRIVATE_TARGETS,
      concurrencyPerWebhook: e.DELIVERY_CONCURRENCY_PER_WEBHOOK,
      workerSlots: e.DELIVERY_WORKER_SLOTS,
      firstAttemptWaitMs: e.DELIVERY_FIRST_ATTEMPT_WAIT_MS,
      firstAttemptWaiters: e.DELIVERY_FIRST_ATTEMPT_WAITERS,
      disableAfter: { text: e.WEBHOOK_DISABLE_AFTER, ms: parseDuration(e.WEBHOOK_DISABLE_AFTER) },
      recoveryBatchSize: e.RECOVERY_BATCH_SIZE,
      recoverInterval: { text: e.RECOVER_INTERVAL, ms: parseDuration(e.RECOVER_INTERVAL) },
      retriesPerMinute: e.DELIVERY_RETRIES_PER_MINUTE,
    },
    fires: { chainBudget: e.CHAIN_FIRE_BUDGET, perMinute: e.FIRES_PER_MINUTE },
    engine: { reconcileIntervalMs: e.RECONCILE_INTERVAL_MS, scheduleSweepMs: e.SCHEDULE_SWEEP_MS, workflowTaskSlots: e.WORKER_WORKFLOW_TASK_SLOTS },
    network: { dnsServers: e.DNS_SERVERS ?? null },
    tools: {
      timeoutMs: e.TOOL_TIMEOUT_MS,
      coinGeckoBaseUrl: e.COINGECKO_BASE_URL,
      dexScreenerBaseUrl: e.DEXSCREENER_BASE_URL,
      polymarketBaseUrl: e.POLYMARKET_BASE_URL,
    },
    quotas: {
      triggersPerAccount: e.QUOTA_TRIGGERS,
      webhooksPerAccount: e.QUOTA_WEBHOOKS,
      toolsPerAgent: e.QUOTA_TOOLS_PER_AGENT,
      connectorsPerAgent: e.QUOTA_CONNECTORS_PER_AGENT,
    },
    hooks: { rateLimitPerSecond: e.HOOK_RATE_LIMIT },
    runs: { concurrencyPerAccount: e.RUN_CONCURRENCY_PER_ACCOUNT, timeoutMs: e.RUN_TIMEOUT_MS, backlogPerSecond: e.RUN_BACKLOG_PER_SECOND },
    model: {
      baseUrl: e.MODEL_BASE_URL ?? null,
      apiKey: e.MODEL_API_KEY ?? null,
      name: e.MODEL_NAME ?? null,
      timeoutMs: e.MODEL_TIMEOUT_MS,
      maxRetries: e.MODEL_MAX_RETRIES,
      tokensPerDay: e.MODEL_TOKENS_PER_DAY,
      allowed: e.MODEL_ALLOWED ?? null,
      contextMaxBytes: e.MODEL_CONTEXT_MAX_BYTES,
    },
    runEvents: {
      heartbeatMs: e.RUN_EVENTS_HEARTBEAT_MS,
      perUser: e.RUN_STREAMS_PER_USER,
      perProcess: e.RUN_STREAMS_PER_PROCESS,
      checkMs: e.RUN_STREAMS_CHECK_MS,
    },
    team: { invitationTtl: { text: e.INVITATION_TTL, ms: parseDuration(e.INVITATION_TTL) } },
    logLevel: e.LOG_LEVEL,
    retention: { days: e.RETENTION_DAYS },
    metrics: { enabled: e.METRICS_ENABLED, token: e.METRICS_TOKEN ?? null, snapshotMs: e.METRICS_SNAPSHOT_MS },
    missedFires: { graceMs: e.MISSED_FIRE_GRACE_MS },
  };
}

/** `localhost`, or a loopback address (127.0.0.0/8, ::1, IPv4-mapped 127.x), with or without IPv6 brackets. */
function isLoopbackHost(host: string): boolean {
  const bare = host.trim().replace(/^\[(.*)\]$/, '$1');
  if (bare.toLowerCase() === 'localhost') return true;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare).range() === 'loopback';
  if (!ipaddr.IPv6.isValid(bare)) return false;
  const address = ipaddr.IPv6.parse(bare);
  return (address.isIPv4MappedAddress() ? address.toIPv4Address() : address).range() === 'loopback';
}

/**
 * Why the API must not start as configured, or null: `/metrics` would be open to every network HOST
 * reaches. Beyond loopback it asks for METRICS_TOKEN (or METRICS_ENABLED=false); one line, for the
 * start-up error. Only the API listens, so only its entry asks (the worker shares the environment).
 */
export function metricsTokenProblem(config: Config): string | null {
  if (!config.metrics.enabled || config.metrics.token !== null || isLoopbackHost(config.http.host)) return null;
  return (
    `METRICS_TOKEN is required when HOST (${config.http.host}) is not a loopback address: set METRICS_TOKEN (16-256 characters) ` +
    'so that GET /metrics asks for it, or METRICS_ENABLED=false'
  );
}
