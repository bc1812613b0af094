import { loadConfig, type Config } from '../../lib/config';
import { createSecretBox } from '../../lib/secrets';

/** The SECRETS_KEY of every test configuration. */
const TEST_SECRETS_KEY = Buffer.alloc(32, 7);

/** Opens and seals what the test configuration's app stores (secrets at rest). */
export const testSecretBox = createSecretBox(TEST_SECRETS_KEY);

/** Environment variables for an API or worker of the tests (processes get them as they are); overrides win. */
export function testEnv(databaseUrl: string, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
    SECRETS_KEY: TEST_SECRETS_KEY.toString('base64'),
    ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'silent',
    ...overrides,
  };
}

/** A valid configuration for tests; overrides are environment-style values. */
export function testConfig(databaseUrl: string, overrides: Record<string, string> = {}): Config {
  return loadConfig(testEnv(databaseUrl, overrides));
}
