import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { databaseUrlProblem, withSslEnvironment } from './database-url';
import { DAY_MS, parseDuration, tryParseDuration } from './durations';
import { loadTemporalSettings, TemporalSettingsError, type TemporalConnectionSettings, type TemporalSettings } from './temporal-settings';

/**
 * The one configuration module (docs/configuration.md). Every process parses the environment once at start-up;
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

/** The instrumentations tracing loads (lib/tracing/start.ts), by the names tracingVariables.disabled takes. */
export const INSTRUMENTATIONS = ['fastify', 'pg', 'http', 'undici'] as const;

/** The OTLP encodings we export spans in: protobuf (the standard's default) or JSON, over HTTP. */
const otlpProtocol = z.enum(['http/protobuf', 'http/json'], { error: 'must be http/protobuf or http/json (gRPC is not supported)' });

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
 * Which peers may tell us the client's address (docs/configuration.md): `false` (none: the socket's address), a hop
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

/** A comma-separated list of nameservers; unset: the system's (dns.getServers(), from /etc/resolv.conf). */
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

/** `false`, a hop count, or trusted proxy addresses/CIDRs (see `trustProxy` above). */
export type TrustProxy = false | number | string[];

export interface Config {
  /**
   * The database's URL as every connection of the process opens it (db/pool.ts, db/migrate.ts, the LISTEN
   * connection): the standard TLS variables (sslVariables) added as `sslmode=`… where the URL names none (the
   * URL wins, as in libpq), and read with libpq's meaning of sslmode (lib/database-url.ts).
   */
  databaseUrl: string;
  /** The most connections this process's pool opens (one more for LISTEN in the API). */
  databasePoolSize: number;
  /** How long a query waits for a connection (a free one of the pool, or a new one's handshake) before the database counts as unavailable. */
  databaseConnectTimeoutMs: number;
  /**
   * uiUrl: the Temporal UI the console links workflows to (null: no links). address and namespace as resolved
   * from the environment and the Temporal config file's profile; connection: what Connection / NativeConnection
   * take (it may hold a client key and an API key: never log it); security: what a log line may say of it.
   */
  temporal: { address: string; namespace: string; uiUrl: string | null; connection: TemporalConnectionSettings; security: string };
  http: { port: number; host: string; publicBaseUrl: string; trustProxy: TrustProxy };
  auth: { jwtSecret: string; accessTokenTtlSeconds: number; refreshTokenTtlDays: number; rateLimitMax: number; rateLimitWindowMs: number };
  secretsKey: Buffer;
  billing: { initialBalance: number; agentCreateCost: number };
  /**
   * concurrencyPerWebhook: delivery attempts in flight per webhook, across every worker; workerSlots:
   * attempts in flight per worker process, on the delivery task queue (docs/architecture.md § Limits and fairness).
   */
  webhooks: {
    /** The retry schedule parsed once: the delay before each attempt, in ms; the first is the first attempt's. */
    retryDelaysMs: number[];
    timeoutMs: number;
    allowPrivateTargets: boolean;
    concurrencyPerWebhook: number;
    workerSlots: number;
    /**
     * A first attempt that finds no slot at its webhook waits in its process while the webhook's line
     * moves: once no slot came back for `timeoutMs` and this long more, its workflow takes over
     * (engine/deliveries/first-attempts.ts); at most `firstAttemptWaiters` wait at once in a process, at most half of
     * them of one account.
     */
    firstAttemptWaitMs: number;
    firstAttemptWaiters: number;
    /** An outgoing webhook whose every attempt failed for this long is disabled (as written, and in ms). */
    disableAfter: { text: string; ms: number };
    /** Failed deliveries a recovery gives a new generation per batch (one activity, one transaction). */
    recoveryBatchSize: number;
    /**
     * At most one recovery per webhook is asked for per interval, and a delivery a
     * recovery re-sent less than an interval ago is not re-sent by the next (as written, and in ms).
     */
    recoverInterval: { text: string; ms: number };
    /** Manual retries per webhook per minute, across every API process. */
    retriesPerMinute: number;
    /** Attempts one delivery gets in all: scheduled, manual retries and recoveries together. */
    maxAttempts: number;
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
  /**
   * Agent tools: the time limit of each call (and of each MCP server's listing), the data tools' public API
   * base URLs, and how long what an MCP server lists is kept per tool (as written, and in ms).
   */
  tools: { timeoutMs: number; coinGeckoBaseUrl: string; dexScreenerBaseUrl: string; polymarketBaseUrl: string; mcpListTtl: { text: string; ms: number } };
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
    /** The provider's protocol: `chat` (Chat Completions) or `responses` (OpenAI's Responses API). */
    api: 'chat' | 'responses';
    baseUrl: string | null;
    apiKey: string | null;
    name: string | null;
    timeoutMs: number;
    maxRetries: number;
    /** Prompt + completion tokens one account may spend per UTC day. */
    tokensPerDay: number;
    /** The models an agent may name; null: any. */
    allowed: string[] | null;
    /** The largest request body (JSON bytes) a model call may send. */
    contextMaxBytes: number;
  };
  /**
   * Live run events (SSE): the interval of the heartbeat comment on an idle stream; streams open at once per
   * user (across every API process), per account (across every API process too) and per process; how often a process renews its streams' places and
   * checks again that each caller may still read the run (a stream that lost access ends within this).
   */
  runEvents: { heartbeatMs: number; perUser: number; perAccount: number; perProcess: number; checkMs: number };
  /**
   * Authenticated requests in progress in one API process: per account, and in all before accounts are served in
   * turn (an account with none in progress is always served); how long a request waits for its turn (api/plugins/request-turns.ts).
   */
  requestTurns: { perAccount: number; perProcess: number; waitMs: number };
  /** How long an invitation stays open to be accepted (as written, and in ms). */
  team: { invitationTtl: { text: string; ms: number } };
  /** docs/api.md § Approvals: how long a run waits for a person's decision before it expires (an agent may override: configJson.approvalTimeout). */
  approvals: { timeout: { text: string; ms: number } };
  logLevel: string;
  /** docs/operations.md § Retention: events, fires, runs, deliveries and the rest it lists, older than `days`, are deleted; an account's days of use after `usageDays`. */
  retention: { days: number; usageDays: number };
  /**
   * GET /metrics (docs/operations.md § Metrics): served at all, the bearer token it asks for (none: open; required
   * when the API listens beyond loopback, see metricsTokenProblem), and how old the engine's figures read
   * from Postgres may be (at most one read per this many ms, however many scrape).
   */
  metrics: { enabled: boolean; token: string | null; snapshotMs: number };
  /**
   * A schedule time with no fire and no reason counts as missed once its trigger's catch-up window and this
   * grace have passed (a fire may be made that late: Temporal catches up within the window).
   */
  missedFires: { graceMs: number };
  /**
   * On SIGTERM the API stops accepting and finishes its requests, the worker stops polling and lets its
   * activities finish, within graceMs; then each exits. workerHealthPort: the worker's /health and /ready (null: none).
   */
  shutdown: { graceMs: number };
  workerHealthPort: number | null;
}

/** A variable of the environment: its name, its parser (with its default), and what Config holds of its value. */
class Variable<T> {
  constructor(
    readonly env: string,
    readonly schema: z.ZodType,
    readonly to: (value: never) => T,
  ) {}
}

/** A setting with no variable: the same in every process. */
class Fixed<T> {
  constructor(readonly value: T) {}
}

/** The variable `env`, parsed by `schema`, held in Config as parsed or as `to` makes it. */
function read<S extends z.ZodType>(env: string, schema: S): Variable<z.output<S>>;
function read<S extends z.ZodType, T>(env: string, schema: S, to: (value: z.output<S>) => T): Variable<T>;
function read(env: string, schema: z.ZodType, to: (value: never) => unknown = (value) => value): Variable<unknown> {
  return new Variable(env, schema, to);
}

const orNull = <T>(value: T | undefined): T | null => value ?? null;
/** A duration as written, and in ms. */
const withMs = (text: string) => ({ text, ms: parseDuration(text) });

/** Config, leaf by leaf: a Variable or a Fixed setting where Config holds a value, an object where it holds a group. */
type Declared<T> =
  | Variable<T>
  | Fixed<T>
  | (T extends Buffer | readonly unknown[] | string | number | boolean | null ? never : { [K in keyof T]-?: Declared<T[K]> });

type Built<D> = D extends Variable<infer T> ? T : D extends Fixed<infer T> ? T : { -readonly [K in keyof D]: Built<D[K]> };

/**
 * Every variable, stated once: its name, parser and default, and where its value goes in Config. The
 * order is the order of the error lines when several are bad.
 */
const declared = {
  databaseUrl: read('DATABASE_URL', z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// connection string')),
  databasePoolSize: read('DATABASE_POOL_SIZE', z.coerce.number().int().min(1).max(1_000).default(10)),
  databaseConnectTimeoutMs: read('DATABASE_CONNECT_TIMEOUT_MS', z.coerce.number().int().min(100).max(600_000).default(5_000)),
  temporal: { uiUrl: read('TEMPORAL_UI_URL', httpUrl.optional(), orNull) },
  http: {
    port: read('PORT', port.default(3000)),
    host: read('HOST', z.string().min(1).default('127.0.0.1')),
    publicBaseUrl: read('PUBLIC_BASE_URL', z.url({ protocol: /^https?$/ }).default('http://localhost:3000').transform((u) => u.replace(/\/+$/, ''))),
    trustProxy: read('TRUST_PROXY', trustProxy.default(false)),
  },
  auth: {
    jwtSecret: read('JWT_SECRET', z.string().min(32, 'must be at least 32 characters')),
    accessTokenTtlSeconds: new Fixed(15 * 60),
    refreshTokenTtlDays: new Fixed(30),
    rateLimitMax: read('AUTH_RATE_LIMIT_MAX', z.coerce.number().int().min(1).default(10)),
    rateLimitWindowMs: read('AUTH_RATE_LIMIT_WINDOW_MS', z.coerce.number().int().min(1000).default(900_000)),
  },
  secretsKey: read('SECRETS_KEY', base64Key32, (v) => Buffer.from(v, 'base64')),
  billing: {
    initialBalance: read('INITIAL_BALANCE', z.coerce.number().int().min(0).default(1000)),
    agentCreateCost: read('AGENT_CREATE_COST', z.coerce.number().int().min(0).default(100)),
  },
  webhooks: {
    retryDelaysMs: read('WEBHOOK_RETRY_SCHEDULE', durationList.default('0s,5s,5m,30m,2h,5h,10h,10h'), (v) => v.split(',').map((s) => parseDuration(s.trim()))),
    timeoutMs: read('WEBHOOK_TIMEOUT_MS', z.coerce.number().int().min(100).max(300_000).default(15_000)),
    allowPrivateTargets: read('ALLOW_PRIVATE_TARGETS', booleanFlag.default(false)),
    concurrencyPerWebhook: read('DELIVERY_CONCURRENCY_PER_WEBHOOK', z.coerce.number().int().min(1).max(1_000).default(10)),
    workerSlots: read('DELIVERY_WORKER_SLOTS', z.coerce.number().int().min(1).max(10_000).default(100)),
    firstAttemptWaitMs: read('DELIVERY_FIRST_ATTEMPT_WAIT_MS', z.coerce.number().int().min(0).max(4_000).default(2_000)),
    firstAttemptWaiters: read('DELIVERY_FIRST_ATTEMPT_WAITERS', z.coerce.number().int().min(0).max(100_000).default(1_000)),
    disableAfter: read('WEBHOOK_DISABLE_AFTER', duration.default('5d'), withMs),
    recoveryBatchSize: read('RECOVERY_BATCH_SIZE', z.coerce.number().int().min(1).max(10_000).default(100)),
    recoverInterval: read(
      'RECOVER_INTERVAL',
      duration
        .refine((text) => {
          const parsed = tryParseDuration(text);
          return 'error' in parsed || parsed.ms <= 86_400_000;
        }, 'must be at most 1d')
        .default('1m'),
      withMs,
    ),
    retriesPerMinute: read('DELIVERY_RETRIES_PER_MINUTE', z.coerce.number().int().min(1).max(100_000).default(60)),
    maxAttempts: read('DELIVERY_MAX_ATTEMPTS', z.coerce.number().int().min(1).max(100_000).default(100)),
  },
  fires: {
    chainBudget: read('CHAIN_FIRE_BUDGET', z.coerce.number().int().min(1).max(100_000).default(100)),
    perMinute: read('FIRES_PER_MINUTE', z.coerce.number().int().min(1).max(1_000_000).default(600)),
  },
  engine: {
    reconcileIntervalMs: read('RECONCILE_INTERVAL_MS', z.coerce.number().int().min(100).max(600_000).default(2_000)),
    scheduleSweepMs: read('SCHEDULE_SWEEP_MS', z.coerce.number().int().min(1_000).max(86_400_000).default(60_000)),
    workflowTaskSlots: read('WORKER_WORKFLOW_TASK_SLOTS', z.coerce.number().int().min(2).max(1_000).default(40)),
  },
  network: { dnsServers: read('DNS_SERVERS', nameservers.optional(), orNull) },
  tools: {
    timeoutMs: read('TOOL_TIMEOUT_MS', z.coerce.number().int().min(100).max(300_000).default(15_000)),
    coinGeckoBaseUrl: read('COINGECKO_BASE_URL', httpUrl.default('https://api.coingecko.com/api/v3')),
    dexScreenerBaseUrl: read('DEXSCREENER_BASE_URL', httpUrl.default('https://api.dexscreener.com')),
    polymarketBaseUrl: read('POLYMARKET_BASE_URL', httpUrl.default('https://gamma-api.polymarket.com')),
    mcpListTtl: read(
      'MCP_LIST_TTL',
      duration
        .refine((text) => {
          const parsed = tryParseDuration(text);
          return !('ms' in parsed) || parsed.ms <= DAY_MS;
        }, 'must be at most 1d')
        .default('5m'),
      withMs,
    ),
  },
  quotas: {
    triggersPerAccount: read('QUOTA_TRIGGERS', z.coerce.number().int().min(0).default(500)),
    webhooksPerAccount: read('QUOTA_WEBHOOKS', z.coerce.number().int().min(0).default(100)),
    toolsPerAgent: read('QUOTA_TOOLS_PER_AGENT', z.coerce.number().int().min(0).default(50)),
    connectorsPerAgent: read('QUOTA_CONNECTORS_PER_AGENT', z.coerce.number().int().min(0).default(20)),
  },
  hooks: { rateLimitPerSecond: read('HOOK_RATE_LIMIT', z.coerce.number().int().min(1).default(50)) },
  runs: {
    concurrencyPerAccount: read('RUN_CONCURRENCY_PER_ACCOUNT', z.coerce.number().int().min(1).max(1_000).default(10)),
    timeoutMs: read('RUN_TIMEOUT_MS', z.coerce.number().int().min(1_000).max(86_400_000).default(300_000)),
    backlogPerSecond: read('RUN_BACKLOG_PER_SECOND', z.coerce.number().min(0).max(100_000).default(5)),
  },
  model: {
    api: read('MODEL_API', z.enum(['chat', 'responses']).default('chat')),
    baseUrl: read('MODEL_BASE_URL', httpUrl.optional(), orNull),
    apiKey: read('MODEL_API_KEY', z.string().max(4096).regex(/^[^\s]+$/, 'must not contain whitespace').optional(), orNull),
    name: read('MODEL_NAME', z.string().trim().min(1).max(200).optional(), orNull),
    timeoutMs: read('MODEL_TIMEOUT_MS', z.coerce.number().int().min(1_000).max(3_600_000).default(120_000)),
    maxRetries: read('MODEL_MAX_RETRIES', z.coerce.number().int().min(0).max(10).default(3)),
    tokensPerDay: read('MODEL_TOKENS_PER_DAY', z.coerce.number().int().min(1).max(1_000_000_000_000).default(2_000_000)),
    allowed: read(
      'MODEL_ALLOWED',
      z
        .string()
        .transform((v) => v.split(',').map((m) => m.trim()).filter((m) => m !== ''))
        .refine((list) => list.length > 0, 'must name at least one model (comma-separated), or be unset to allow any')
        .refine((list) => list.every((m) => m.length <= 200), 'each model name must be at most 200 characters')
        .optional(),
      orNull,
    ),
    contextMaxBytes: read('MODEL_CONTEXT_MAX_BYTES', z.coerce.number().int().min(4_096).max(67_108_864).default(262_144)),
  },
  runEvents: {
    heartbeatMs: read('RUN_EVENTS_HEARTBEAT_MS', z.coerce.number().int().min(100).max(300_000).default(15_000)),
    perUser: read('RUN_STREAMS_PER_USER', z.coerce.number().int().min(1).max(1_000).default(10)),
    perAccount: read('RUN_STREAMS_PER_ACCOUNT', z.coerce.number().int().min(1).max(100_000).default(50)),
    perProcess: read('RUN_STREAMS_PER_PROCESS', z.coerce.number().int().min(1).max(100_000).default(2_000)),
    checkMs: read('RUN_STREAMS_CHECK_MS', z.coerce.number().int().min(100).max(30_000).default(10_000)),
  },
  requestTurns: {
    perAccount: read('REQUESTS_IN_FLIGHT_PER_ACCOUNT', z.coerce.number().int().min(1).max(100_000).default(64)),
    perProcess: read('REQUESTS_IN_FLIGHT_PER_PROCESS', z.coerce.number().int().min(1).max(100_000).default(256)),
    waitMs: read('REQUESTS_TURN_WAIT_MS', z.coerce.number().int().min(0).max(60_000).default(2_000)),
  },
  team: {
    invitationTtl: read(
      'INVITATION_TTL',
      duration
        .refine((text) => {
          const parsed = tryParseDuration(text);
          return !('ms' in parsed) || parsed.ms <= 365 * DAY_MS;
        }, 'must be at most 365d')
        .default('7d'),
      withMs,
    ),
  },
  approvals: {
    timeout: read(
      'APPROVAL_TIMEOUT',
      duration
        .refine((text) => {
          const parsed = tryParseDuration(text);
          return !('ms' in parsed) || (parsed.ms >= 1_000 && parsed.ms <= 365 * DAY_MS);
        }, 'must be from 1s to 365d')
        .default('24h'),
      withMs,
    ),
  },
  logLevel: read('LOG_LEVEL', z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info')),
  retention: {
    days: read('RETENTION_DAYS', z.coerce.number().int().min(1).max(36_500).default(30)),
    usageDays: read('USAGE_RETENTION_DAYS', z.coerce.number().int().min(1).max(36_500).default(400)),
  },
  metrics: {
    enabled: read('METRICS_ENABLED', booleanFlag.default(true)),
    token: read('METRICS_TOKEN', z.string().min(16, 'must be at least 16 characters').max(256).optional(), orNull),
    snapshotMs: read('METRICS_SNAPSHOT_MS', z.coerce.number().int().min(100).max(5_000).default(5_000)),
  },
  missedFires: { graceMs: read('MISSED_FIRE_GRACE_MS', z.coerce.number().int().min(1_000).max(86_400_000).default(60_000)) },
  shutdown: { graceMs: read('SHUTDOWN_GRACE_MS', z.coerce.number().int().min(0).max(600_000).default(10_000)) },
  workerHealthPort: read('WORKER_HEALTH_PORT', port.optional(), orNull),
} satisfies Declared<DeclaredConfig>;

/** Config but the Temporal connection's settings, which lib/temporal-settings.ts resolves from the variables below. */
type DeclaredConfig = Omit<Config, 'temporal'> & { temporal: Pick<Config['temporal'], 'uiUrl'> };

/** libpq's standard TLS variables, added to the database's URL where it names none (lib/database-url.ts). */
const sslVariables = {
  sslmode: read('PGSSLMODE', sslMode.optional()),
  sslrootcert: read('PGSSLROOTCERT', z.string().min(1).optional()),
  sslcert: read('PGSSLCERT', z.string().min(1).optional()),
  sslkey: read('PGSSLKEY', z.string().min(1).optional()),
};

/**
 * The Temporal connection's variables: read by @temporalio/envconfig as the Temporal CLI reads them
 * (lib/temporal-settings.ts), declared here to be validated and documented. The address may come from a TOML profile instead.
 */
const temporalVariables = [
  read('TEMPORAL_ADDRESS', z.string().regex(/^[^\s:]+:\d+$/, 'must be host:port').optional()),
  read('TEMPORAL_NAMESPACE', z.string().min(1).default('default')),
  read('TEMPORAL_API_KEY', z.string().regex(/^[^\s]+$/, 'must not contain whitespace').optional()),
  read('TEMPORAL_TLS', z.enum(['true', 'false', '1', '0']).optional()),
  read('TEMPORAL_TLS_CLIENT_CERT_PATH', z.string().optional()),
  read('TEMPORAL_TLS_CLIENT_CERT_DATA', z.string().optional()),
  read('TEMPORAL_TLS_CLIENT_KEY_PATH', z.string().optional()),
  read('TEMPORAL_TLS_CLIENT_KEY_DATA', z.string().optional()),
  read('TEMPORAL_TLS_SERVER_CA_CERT_PATH', z.string().optional()),
  read('TEMPORAL_TLS_SERVER_CA_CERT_DATA', z.string().optional()),
  read('TEMPORAL_TLS_SERVER_NAME', z.string().optional()),
  read('TEMPORAL_PROFILE', z.string().optional()),
  read('TEMPORAL_CONFIG_FILE', z.string().optional()),
];

/** The variables under `node`, in order. */
function variablesOf(node: object): Variable<unknown>[] {
  if (node instanceof Variable) return [node];
  if (node instanceof Fixed) return [];
  return Object.values(node).flatMap((child: object) => variablesOf(child));
}

/** Config from the parsed variables, leaf by leaf. */
function build<D extends object>(node: D, values: Record<string, unknown>): Built<D> {
  if (node instanceof Variable) return node.to(values[node.env] as never) as Built<D>;
  if (node instanceof Fixed) return node.value as Built<D>;
  return Object.fromEntries(Object.entries(node).map(([key, child]: [string, object]) => [key, build(child, values)])) as Built<D>;
}

/** Every variable the configuration reads, with its parser and default (docs/configuration.md's table is checked against it). */
/**
 * Tracing's variables (lib/tracing/start.ts), read by tracingConfig before anything else loads: on when an OTLP
 * endpoint is set. The SDK itself reads the other standard OTEL_* variables (OTEL_BSP_*, OTEL_EXPORTER_OTLP_HEADERS,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, …).
 */
const tracingVariables = {
  endpoint: read('OTEL_EXPORTER_OTLP_ENDPOINT', httpUrl.optional()),
  tracesEndpoint: read('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', httpUrl.optional()),
  protocol: read('OTEL_EXPORTER_OTLP_PROTOCOL', otlpProtocol.optional()),
  tracesProtocol: read('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', otlpProtocol.optional()),
  serviceName: read('OTEL_SERVICE_NAME', z.string().trim().min(1).max(200).optional()),
  disabled: read(
    'OTEL_NODE_DISABLED_INSTRUMENTATIONS',
    z
      .string()
      .transform((v) => v.split(',').map((n) => n.trim()).filter((n) => n !== ''))
      .refine((list) => list.every((n) => (INSTRUMENTATIONS as readonly string[]).includes(n)), `must be a comma-separated list of ${INSTRUMENTATIONS.join(', ')}`)
      .transform((list) => list as (typeof INSTRUMENTATIONS)[number][])
      .optional(),
  ),
  /** Prompt and completion text on the GenAI spans (gen_ai.input.messages / gen_ai.output.messages): off unless asked. */
  captureGenAiContent: read('OTEL_GENAI_CAPTURE_CONTENT', booleanFlag.optional()),
};

export const configVariables: Record<string, z.ZodType> = Object.fromEntries(
  [...variablesOf(sslVariables), ...temporalVariables, ...variablesOf(tracingVariables), ...variablesOf(declared)].map((v) => [v.env, v.schema]),
);

const envSchema = z.object(configVariables);

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
    const temporalProblem = temporalSettingsProblem(cleaned as Record<string, string>);
    if (temporalProblem && !lines.some((l) => l.startsWith(`  ${temporalProblem.split(':')[0]}:`))) lines.push(`  ${temporalProblem}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const built = build(declared, parsed.data);
  const databaseUrl = withSslEnvironment(built.databaseUrl, build(sslVariables, parsed.data));
  const databaseProblem = databaseUrlProblem(databaseUrl, SSL_MODES);
  if (databaseProblem) throw new ConfigError(`Invalid configuration:\n  ${databaseProblem}`);
  let temporal: TemporalSettings;
  try {
    temporal = loadTemporalSettings(cleaned as Record<string, string>);
  } catch (err) {
    if (err instanceof TemporalSettingsError) throw new ConfigError(`Invalid configuration:\n  ${err.message}`);
    throw err;
  }
  const config: Config = {
    ...built,
    databaseUrl,
    temporal: {
      ...built.temporal,
      address: temporal.connection.address,
      namespace: temporal.namespace,
      connection: temporal.connection,
      security: temporal.security,
    },
  };
  const { name, allowed } = config.model;
  if (name && allowed && !allowed.includes(name)) {
    throw new ConfigError(`Invalid configuration:\n  ${declared.model.name.env}: ${name} is not among ${declared.model.allowed.env} (${allowed.join(', ')})`);
  }
  return config;
}

/**
 * A database URL as every process connects with it: the PGSSL* variables of `env` written in where the URL names
 * none, with libpq's meaning of sslmode (lib/database-url.ts), exactly as loadConfig does for the API and the worker.
 * For what connects without loading the whole config (migrations run by `npm start` and `npm run migrate`).
 * Throws ConfigError naming the variable.
 */
export function databaseUrlFromEnvironment(url: string, env: Record<string, string | undefined> = process.env): string {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = z.object(Object.fromEntries(variablesOf(sslVariables).map((v) => [v.env, v.schema]))).safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(`Invalid configuration:\n${parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n')}`);
  }
  const databaseUrl = withSslEnvironment(url, build(sslVariables, parsed.data));
  const problem = databaseUrlProblem(databaseUrl, SSL_MODES);
  if (problem) throw new ConfigError(`Invalid configuration:\n  ${problem}`);
  return databaseUrl;
}

/** The Temporal settings' problem (one line naming the variable), or null. */
function temporalSettingsProblem(env: Record<string, string>): string | null {
  try {
    loadTemporalSettings(env);
    return null;
  } catch (err) {
    if (err instanceof TemporalSettingsError) return err.message;
    throw err;
  }
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
 * Why the API must not start as configured, or null: `/metrics` would be open to every network the API's
 * host reaches. Beyond loopback it asks for a metrics token (or metrics switched off); one line, for the
 * start-up error. Only the API listens, so only its entry asks (the worker shares the environment).
 */
export function metricsTokenProblem(config: Config): string | null {
  if (!config.metrics.enabled || config.metrics.token !== null || isLoopbackHost(config.http.host)) return null;
  const { token, enabled } = declared.metrics;
  return (
    `${token.env} is required when ${declared.http.host.env} (${config.http.host}) is not a loopback address: set ${token.env} (16-256 characters) ` +
    `so that GET /metrics asks for it, or ${enabled.env}=false`
  );
}

/** Where and how spans are exported; null when tracing is off (no OTLP endpoint set). */
export interface TracingConfig {
  serviceName: string;
  protocol: 'http/protobuf' | 'http/json';
  /** Instrumentations not to load. */
  disabled: (typeof INSTRUMENTATIONS)[number][];
  /** The GenAI spans carry the messages sent and answered (lib/tracing/genai.ts). */
  captureGenAiContent: boolean;
}

/**
 * Tracing's part of the configuration, read before anything else loads (lib/tracing/start.ts): on only when
 * an OTLP endpoint (tracingVariables) is set. Throws a ConfigError naming a bad value.
 */
export function tracingConfig(defaultServiceName: string, env: Record<string, string | undefined> = process.env): TracingConfig | null {
  const variables = Object.values(tracingVariables);
  const cleaned = Object.fromEntries(variables.filter((v) => env[v.env] !== undefined && env[v.env] !== '').map((v) => [v.env, env[v.env]]));
  const parsed = z.object(Object.fromEntries(variables.map((v) => [v.env, v.schema]))).safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(`Invalid configuration:\n${parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n')}`);
  }
  const t = build(tracingVariables, parsed.data);
  if (!t.endpoint && !t.tracesEndpoint) return null;
  return {
    serviceName: t.serviceName ?? defaultServiceName,
    protocol: t.tracesProtocol ?? t.protocol ?? 'http/protobuf',
    disabled: t.disabled ?? [],
    captureGenAiContent: t.captureGenAiContent ?? false,
  };
}
