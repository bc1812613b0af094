/**
 * Turns of a shared, bounded resource taken by accounts (docs/architecture.md § Limits and fairness): an account
 * holds at most `perAccount` turns; the process gives at most `perProcess`. At the process cap an account with
 * no turn still gets one at once (it is never refused because of others: each account holds at most one beyond
 * the cap), and the others wait for freed turns, served account by account (one waiter of each in turn), for at
 * most `waitMs`. `take` answers the turn's release (idempotent), or why none was given.
 */
export interface FairTurns {
  take(accountId: string, signal?: AbortSignal): Promise<{ release: () => void } | { refused: 'account' | 'process' | 'aborted' }>;
  /** Turns held now, in all and by how many accounts (for tests and metrics). */
  held(): { total: number; accounts: number };
}

export function createFairTurns(limits: { perAccount: number; perProcess: number; waitMs: number }): FairTurns {
  const inFlight = { total: 0, byAccount: new Map<string, number>() };
  /** Accounts waiting for a turn of the process, in the order they are to be served: account → its waiters. */
  const waiting = new Map<string, Array<() => void>>();

  const giveBack = (key: string) => {
    const left = (inFlight.byAccount.get(key) ?? 1) - 1;
    if (left === 0) inFlight.byAccount.delete(key);
    else inFlight.byAccount.set(key, left);
  };

  /** Gives freed turns to waiting accounts, one account after another (each account's first waiter). */
  const serveWaiting = () => {
    while (inFlight.total < limits.perProcess && waiting.size > 0) {
      const [account, queue] = waiting.entries().next().value!;
      waiting.delete(account);
      const wake = queue.shift()!;
      // The account goes to the back of the line for its next waiter.
      if (queue.length > 0) waiting.set(account, queue);
      inFlight.total++;
      wake();
    }
  };

  const releaser = (key: string) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      inFlight.total--;
      giveBack(key);
      serveWaiting();
    };
  };

  return {
    async take(key, signal) {
      const mine = inFlight.byAccount.get(key) ?? 0;
      if (mine >= limits.perAccount) return { refused: 'account' };
      inFlight.byAccount.set(key, mine + 1);
      if (inFlight.total < limits.perProcess || mine === 0) {
        inFlight.total++;
        return { release: releaser(key) };
      }
      const served = await new Promise<boolean>((resolve) => {
        // Called by serveWaiting, which has counted the turn as taken (inFlight.total) for this waiter.
        const wake = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', leave);
          resolve(true);
        };
        const leave = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', leave);
          const queue = waiting.get(key);
          const at = queue?.indexOf(wake) ?? -1;
          if (queue && at >= 0) queue.splice(at, 1);
          if (queue && queue.length === 0) waiting.delete(key);
          resolve(false);
        };
        const timer = setTimeout(leave, limits.waitMs);
        signal?.addEventListener('abort', leave, { once: true });
        const queue = waiting.get(key);
        if (queue) queue.push(wake);
        else waiting.set(key, [wake]);
      });
      if (!served) {
        giveBack(key);
        return { refused: signal?.aborted ? 'aborted' : 'process' };
      }
      return { release: releaser(key) };
    },
    held: () => ({ total: inFlight.total, accounts: inFlight.byAccount.size }),
  };
}
