import { loadConfig, type Config } from '../../lib/config';

/** A valid configuration for tests; overrides are environment-style values. */
export function testConfig(databaseUrl: string, overrides: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
    SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'silent',
    ...overrides,
  });
}
