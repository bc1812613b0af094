import type { Connection } from '@temporalio/client';
import { pendingMigrations } from '../../db/migration-status';
import type { Db } from '../../db/pool';
import { probeTls } from '../../lib/temporal-failures';
import type { TemporalConnectionSettings } from '../../lib/temporal-settings';

const TIMEOUT_MS = 3000;
/** A failing dependency's cause is logged at most once a minute per kind (a probe every second must not flood the log). */
const LOG_INTERVAL_MS = 60_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * A dependency's health as the unauthenticated health pages answer it: ok, or which dependency failed
 * and nothing else — no address, no driver error (docs/api.md § Health; those go to
 * the log).
 */
export type Health = { ok: true } | { ok: false; message: string };

/** gRPC status codes the frontend answers a credential it refuses with. */
const UNAUTHENTICATED = 16;
const PERMISSION_DENIED = 7;

const POSTGRES_DOWN = `Postgres did not answer within ${TIMEOUT_MS / 1000} s`;
const TEMPORAL_DOWN = `Temporal did not answer within ${TIMEOUT_MS / 1000} s`;

export function createHealthService(deps: { db: Db; temporal: Connection; temporalSettings: TemporalConnectionSettings; log: (msg: string, err: unknown) => void }) {
  const { address } = deps.temporalSettings;
  const lastLogged = new Map<string, number>();
  /** Logs a failure's cause (with its address or driver error), at most once per LOG_INTERVAL_MS per kind. */
  const logCause = (kind: string, msg: string, err: unknown) => {
    const now = Date.now();
    if (now - (lastLogged.get(kind) ?? -Infinity) < LOG_INTERVAL_MS) return;
    lastLogged.set(kind, now);
    deps.log(msg, err);
  };
  const database = async (): Promise<Health> => {
    try {
      await withTimeout(deps.db.query('SELECT 1'), TIMEOUT_MS);
      return { ok: true };
    } catch (err) {
      logCause('postgres', 'health: Postgres did not answer', err);
      return { ok: false, message: POSTGRES_DOWN };
    }
  };
  /** Asks the Temporal frontend for its health; the cause, when it fails, in one line that names the address. */
  const askTemporal = async (): Promise<{ ok: true } | { ok: false; cause: string; err: unknown; probeTls: boolean }> => {
    try {
      // The gRPC deadline also bounds the (lazy) connect. No outer timer: abandoning the call while
      // the SDK is still connecting leaves a promise of its own to reject when the connection closes.
      const res = await deps.temporal.withDeadline(Date.now() + TIMEOUT_MS, () => deps.temporal.healthService.check({}));
      if (res.status === 1) return { ok: true }; // SERVING
      return { ok: false, cause: `Temporal at ${address} answers but is not serving`, err: null, probeTls: false };
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code === UNAUTHENTICATED || code === PERMISSION_DENIED) {
        return { ok: false, cause: `Temporal at ${address} refused our credentials (check TEMPORAL_API_KEY or the client certificate)`, err, probeTls: false };
      }
      return { ok: false, cause: `Temporal at ${address} did not answer within ${TIMEOUT_MS / 1000} s`, err, probeTls: true };
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
        logCause('migrations', 'health: could not read the applied migrations', err);
        return { ok: false, message: POSTGRES_DOWN };
      }
    },
    /** The public check: which dependency failed, nothing more; no TLS probe (one per failing call would let anyone make us dial out). */
    async temporal(): Promise<Health> {
      const result = await askTemporal();
      if (result.ok) return result;
      logCause('temporal', `health: ${result.cause}`, result.err);
      return { ok: false, message: TEMPORAL_DOWN };
    },
    /**
     * The operator's diagnosis, for the log at start-up only: why Temporal cannot be reached, with its
     * address; the gRPC client only says it could not connect in time, so a TLS handshake of our own says why.
     */
    async diagnoseTemporal(): Promise<string | null> {
      const result = await askTemporal();
      if (result.ok) return null;
      return (result.probeTls ? await probeTls(deps.temporalSettings) : null) ?? result.cause;
    },
  };
}
export type HealthService = ReturnType<typeof createHealthService>;
