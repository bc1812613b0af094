import { testNamespace } from './namespace';
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

/**
 * testEnv for an API or worker process of the test file `testFile` (its own Temporal namespace) listening
 * on loopback `port`, with its public URL there; quiet but for warnings.
 */
export function processEnv(databaseUrl: string, testFile: string, port: number, overrides: Record<string, string> = {}): Record<string, string> {
  return testEnv(databaseUrl, {
    TEMPORAL_NAMESPACE: testNamespace(testFile),
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'warn',
    ...overrides,
  });
}

/** A valid configuration for tests; overrides are environment-style values. */
export function testConfig(databaseUrl: string, overrides: Record<string, string> = {}): Config {
  return loadConfig(testEnv(databaseUrl, overrides));
}
