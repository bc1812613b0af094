import { z } from 'zod';

/**
 * The one configuration module (DESIGN §1). Every process parses the environment once at start-up;
 * a bad value stops it with a message naming the variable.
 */

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const durationList = z
  .string()
  .regex(/^\s*\d+(ms|s|m|h|d)\s*(,\s*\d+(ms|s|m|h|d)\s*)*$/, 'must be a comma-separated list of durations like 0s,5s,5m,2h');

const base64Key32 = z
  .string()
  .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes encoded as base64');

const port = z.coerce.number().int().min(0).max(65535);

const envSchema = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// connection string'),
  TEMPORAL_ADDRESS: z.string().regex(/^[^\s:]+:\d+$/, 'must be host:port'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  PORT: port.default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).default('http://localhost:3000').transform((u) => u.replace(/\/+$/, '')),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters'),
  SECRETS_KEY: base64Key32,
  INITIAL_BALANCE: z.coerce.number().int().min(0).default(1000),
  AGENT_CREATE_COST: z.coerce.number().int().min(0).default(100),
  AUTH_RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(10),
  AUTH_RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(1000).default(900_000),
  TRUST_PROXY: booleanFlag.default(false),
  WEBHOOK_RETRY_SCHEDULE: durationList.default('0s,5s,5m,30m,2h,5h,10h,10h'),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  ALLOW_PRIVATE_TARGETS: booleanFlag.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Env = z.input<typeof envSchema>;

export interface Config {
  databaseUrl: string;
  temporal: { address: string; namespace: string };
  http: { port: number; host: string; publicBaseUrl: string; trustProxy: boolean };
  auth: { jwtSecret: string; accessTokenTtlSeconds: number; refreshTokenTtlDays: number; rateLimitMax: number; rateLimitWindowMs: number };
  secretsKey: Buffer;
  billing: { initialBalance: number; agentCreateCost: number };
  webhooks: { retrySchedule: string[]; timeoutMs: number; allowPrivateTargets: boolean };
  logLevel: string;
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
  return {
    databaseUrl: e.DATABASE_URL,
    temporal: { address: e.TEMPORAL_ADDRESS, namespace: e.TEMPORAL_NAMESPACE },
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
    },
    logLevel: e.LOG_LEVEL,
  };
}
