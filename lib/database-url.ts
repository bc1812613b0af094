import { parse } from 'pg-connection-string';

/**
 * DATABASE_URL and libpq's TLS settings (docs/configuration.md, `DATABASE_URL`).
 *
 * pg reads `sslmode=` from a connection string, but by default not as libpq does: `require`, `prefer` and
 * `verify-ca` all verify the server's certificate and name there (pg 8 warns that this will change).
 * `uselibpqcompat=true` asks pg-connection-string for libpq's meaning: `require` encrypts without verifying
 * (unless `sslrootcert` is given: then as `verify-ca`), `verify-ca` checks the chain and not the name,
 * `verify-full` both. `prefer` encrypts without verifying and, unlike libpq, does not fall back to plain
 * text when the server has no TLS (pg cannot). The PGSSL* variables are written into the URL where it
 * names none, so that every connection of the process (pool, migrations, LISTEN) opens the same way.
 */

export interface SslEnvironment {
  sslmode?: string | undefined;
  sslrootcert?: string | undefined;
  sslcert?: string | undefined;
  sslkey?: string | undefined;
}

function queryOf(url: string): URLSearchParams {
  const at = url.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : url.slice(at + 1));
}

/** The URL with each PGSSL* setting the URL lacks, and libpq's meaning of sslmode unless it asks otherwise. */
export function withSslEnvironment(url: string, ssl: SslEnvironment): string {
  const present = queryOf(url);
  const added = new URLSearchParams();
  for (const [name, value] of Object.entries(ssl)) if (value !== undefined && !present.has(name)) added.set(name, value);
  if (!present.has('uselibpqcompat')) added.set('uselibpqcompat', 'true');
  const extra = added.toString();
  if (extra === '') return url;
  return `${url}${url.includes('?') ? (url.endsWith('?') || url.endsWith('&') ? '' : '&') : '?'}${extra}`;
}

/**
 * Why pg could not open connections from this URL as configured, in one line naming the variable, or null:
 * an sslmode pg cannot honour, verify-ca without a root certificate, a certificate file it cannot read.
 * Never repeats the URL (it may hold a password).
 */
export function databaseUrlProblem(url: string, modes: readonly string[]): string | null {
  const sslmode = queryOf(url).get('sslmode');
  if (sslmode !== null && !modes.includes(sslmode)) return `DATABASE_URL: sslmode must be one of ${modes.join(', ')} (not ${JSON.stringify(sslmode)})`;
  try {
    parse(url);
    return null;
  } catch (err) {
    const message = (err as Error).message.replace(/^SECURITY WARNING: /, '').split('. ')[0];
    return `DATABASE_URL (or PGSSLMODE, PGSSLROOTCERT, PGSSLCERT, PGSSLKEY): ${message}`;
  }
}
