/** Child process: the bare Fastify + pg baseline on a free loopback port. */
import pg from 'pg';
import { buildBareServer } from './bare-server';
import { requiredEnv, serveUnderParent } from './kit/child-server';

async function main(): Promise<void> {
  const pool = new pg.Pool({ connectionString: requiredEnv('BENCH_DATABASE_URL'), max: 10 }); // same size as the API's
  pool.on('error', () => {});
  const app = buildBareServer(pool);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('unexpected listen address');
  serveUnderParent(address.port, async () => {
    await app.close();
    await pool.end();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
