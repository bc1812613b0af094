import { buildApp } from '../api/app';
import { loadConfig } from '../lib/config';
import { createTemporalClient } from '../engine/temporal/client';
import { createPool } from '../db/pool';

/**
 * The API's OpenAPI document, built in-process from the app itself (no server, no database: nothing connects
 * until a request needs it). The configuration is fixed here, never read from the environment, so the
 * document is the same wherever it is made.
 */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({
    DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
    TEMPORAL_ADDRESS: '127.0.0.1:1',
    JWT_SECRET: 'openapi-document-only-openapi-document-only',
    SECRETS_KEY: Buffer.alloc(32).toString('base64'),
    LOG_LEVEL: 'silent',
  });
  const db = createPool(config.databaseUrl);
  const temporal = createTemporalClient(config);
  const app = await buildApp({ config, db, temporal, logger: false });
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
    await temporal.close();
    await db.end();
  }
}
