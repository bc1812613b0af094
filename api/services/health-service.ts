import type { Connection } from '@temporalio/client';
import { pendingMigrations } from '../../db/migration-status';
import type { Db } from '../../db/pool';
import { probeTls } from '../../lib/temporal-failures';
import type { TemporalConnectionSettings } from '../../lib/temporal-settings';

const TIMEOUT_MS = 3000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** A dependency's health: ok, or why not in one line (no secret in it). */
export type Health = { ok: true } | { ok: false; message: string };

/** gRPC status codes the frontend answers a credential it refuses with. */
const UNAUTHENTICATED = 16;
const PERMISSION_DENIED = 7;

export function createHealthService(deps: { db: Db; temporal: Connection; temporalSettings: TemporalConnectionSettings }) {
  const { address } = deps.temporalSettings;
  const database = async (): Promise<Health> => {
    try {
      await withTimeout(deps.db.query('SELECT 1'), TIMEOUT_MS);
      return { ok: true };
    } catch (err) {
      return { ok: false, message: `Postgres did not answer within ${TIMEOUT_MS / 1000} s (${(err as Error).message})` };
    }
  };
  return {
    database,
    /** Readiness: Postgres answers and has every migration this build carries. */
    async ready(): Promise<Health> {
      const db = await database();
      if (!db.ok) return db;
      try {
        const pending = await withTimeout(pendingMigrations(deps.db), TIMEOUT_MS);
        if (pending.length > 0) return { ok: false, message: `The database lacks migrations ${pending.join(', ')}: run npm run migrate` };
        return { ok: true };
      } catch (err) {
        return { ok: false, message: `Could not read the applied migrations (${(err as Error).message})` };
      }
    },
    async temporal(): Promise<Health> {
      try {
        // The gRPC deadline also bounds the (lazy) connect. No outer timer: abandoning the call while
        // the SDK is still connecting leaves a promise of its own to reject when the connection closes.
        const res = await deps.temporal.withDeadline(Date.now() + TIMEOUT_MS, () => deps.temporal.healthService.check({}));
        if (res.status === 1) return { ok: true }; // SERVING
        return { ok: false, message: `Temporal at ${address} answers but is not serving` };
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (code === UNAUTHENTICATED || code === PERMISSION_DENIED) {
          return { ok: false, message: `Temporal at ${address} refused our credentials (check TEMPORAL_API_KEY or the client certificate)` };
        }
        // The gRPC client only says it could not connect in time; a TLS handshake of our own says why.
        const tls = await probeTls(deps.temporalSettings);
        return { ok: false, message: tls ?? `Temporal at ${address} did not answer within ${TIMEOUT_MS / 1000} s` };
      }
    },
  };
}
export type HealthService = ReturnType<typeof createHealthService>;
