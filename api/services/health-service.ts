import type { Connection } from '@temporalio/client';
import type { Db } from '../../db/pool';

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

export function createHealthService(deps: { db: Db; temporal: Connection }) {
  return {
    async database(): Promise<boolean> {
      try {
        await withTimeout(deps.db.query('SELECT 1'), TIMEOUT_MS);
        return true;
      } catch {
        return false;
      }
    },
    async temporal(): Promise<boolean> {
      try {
        // The gRPC deadline also bounds the (lazy) connect. No outer timer: abandoning the call while
        // the SDK is still connecting leaves a promise of its own to reject when the connection closes.
        const res = await deps.temporal.withDeadline(Date.now() + TIMEOUT_MS, () => deps.temporal.healthService.check({}));
        return res.status === 1; // SERVING
      } catch {
        return false;
      }
    },
  };
}
export type HealthService = ReturnType<typeof createHealthService>;
