import type { NotificationListener } from '../../db/notifications';
import type { RunsRepository } from '../../db/repositories/runs';

/**
 * Waiting for a run to end without holding a database connection (the MCP server's `run_agent`): the
 * process's one LISTEN connection for `run_events` (the notification live run streams wake on: the
 * database notifies a run's id when a step of it finishes or it ends) wakes the waiter, which then reads
 * the run's status alone with a pooled connection for one short query; a notification lost with a dropped
 * connection costs at most `recheckMs`. At most `perAccount` waits of one account at once in a process:
 * beyond that a caller does not wait (it is told the run as it stands), so one account's waits can't fill
 * the process.
 */
export function createRunWaits(deps: { runs: RunsRepository; listener: NotificationListener; perAccount: number; recheckMs: number }) {
  const waiters = new Map<string, Set<() => void>>();
  const byAccount = new Map<string, number>();
  let subscribed = false;

  function watch(runId: string, wake: () => void): () => void {
    if (!subscribed) {
      subscribed = true;
      deps.listener.subscribe({
        notified: (id) => waiters.get(id)?.forEach((w) => w()),
        reconnected: () => waiters.forEach((set) => set.forEach((w) => w())),
      });
    }
    const set = waiters.get(runId) ?? new Set();
    set.add(wake);
    waiters.set(runId, set);
    return () => {
      set.delete(wake);
      if (set.size === 0) waiters.delete(runId);
    };
  }

  return {
    /**
     * Waits up to `ms` for run `runId` to end: true once it has (succeeded or failed), false when the time
     * passed, `signal` aborted (the caller went away) or the account already has `perAccount` waits.
     */
    async untilEnded(accountId: string, runId: string, ms: number, signal: AbortSignal): Promise<boolean> {
      const ended = async () => {
        const status = await deps.runs.findRunStatus(runId);
        return status === 'succeeded' || status === 'failed' || status === null;
      };
      if (ms <= 0 || signal.aborted) return ended();
      const mine = byAccount.get(accountId) ?? 0;
      if (mine >= deps.perAccount) return ended();
      byAccount.set(accountId, mine + 1);
      let woken = false;
      let wake: () => void = () => {
        woken = true;
      };
      const unwatch = watch(runId, () => wake());
      const deadline = Date.now() + ms;
      try {
        for (;;) {
          // Read after watching: a notification sent meanwhile wakes the next wait at once.
          woken = false;
          if (await ended()) return true;
          const left = deadline - Date.now();
          if (left <= 0 || signal.aborted) return false;
          if (!woken) {
            await new Promise<void>((resolve) => {
              const done = () => {
                clearTimeout(timer);
                signal.removeEventListener('abort', done);
                wake = () => {
                  woken = true;
                };
                resolve();
              };
              const timer = setTimeout(done, Math.min(left, deps.recheckMs));
              signal.addEventListener('abort', done, { once: true });
              wake = done;
            });
          }
        }
      } finally {
        unwatch();
        const left = (byAccount.get(accountId) ?? 1) - 1;
        if (left === 0) byAccount.delete(accountId);
        else byAccount.set(accountId, left);
      }
    },
  };
}
export type RunWaits = ReturnType<typeof createRunWaits>;
