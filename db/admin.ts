import pg from 'pg';

/**
 * Database-level administration (create, drop) on the server a connection string points at. These
 * statements run on the `postgres` maintenance database, never on the database they act on.
 */

/** The same server and credentials, another database. */
export function urlForDatabase(databaseUrl: string, name: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${encodeURIComponent(name)}`;
  return url.toString();
}

export function databaseName(databaseUrl: string): string {
  return decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
}

export async function withMaintenanceClient<T>(databaseUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlForDatabase(databaseUrl, 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const name = databaseName(databaseUrl);
  if (!name) return;
  await withMaintenanceClient(databaseUrl, async (client) => {
    try {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
    } catch (err) {
      // Another process created it between our check and our create.
      if ((err as { code?: string }).code !== '42P04') throw err;
    }
  });
}

/** Drops the database named in the URL, closing any connection still open to it. */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  await withMaintenanceClient(databaseUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(databaseName(databaseUrl))} WITH (FORCE)`),
  );
}
