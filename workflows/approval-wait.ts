import { condition, defineSignal, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { APPROVAL_DECIDED_SIGNAL, RUN_SLOT_FREED_SIGNAL, type StepOutcome, type StepRef } from '../engine/contract';

export const approvalDecided = defineSignal(APPROVAL_DECIDED_SIGNAL);
const slotFreed = defineSignal(RUN_SLOT_FREED_SIGNAL);

/** Database work only (engine/runs/approvals.ts), idempotent: local activities, retried for a few minutes like the run's bookkeeping. */
const { requestApproval, resumeApproval } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/**
 * An approval step (docs/architecture.md § Approvals): the approval is asked for (the run becomes
 * `waiting` and frees its slot), then the workflow waits — a durable timer and a signal, no activity, no
 * worker slot, no database connection — until the `approvalDecided` signal (sent by the outbox once a
 * decision is recorded) or the approval's expiry, whichever first; Postgres says what was decided. Once
 * decided the run takes a slot of its account's line again (waiting for `runSlotFreed` when they are
 * taken) and the step answers the steps it adds. `waitedMs`: how long the run waited, not counted
 * against its time limit. Histories from before approvals never hold an approval step, so this path
 * needs no patch: it is taken only by runs whose model asked for a tool that requires approval.
 */
export async function awaitApproval(ref: StepRef, now: () => number): Promise<{ outcome: StepOutcome; waitedMs: number }> {
  const started = now();
  let woken = false;
  const wake = () => {
    woken = true;
  };
  setHandler(approvalDecided, wake);
  setHandler(slotFreed, wake);
  const asked = await requestApproval(ref);
  if (asked.status === 'stopped') return { outcome: asked, waitedMs: now() - started };
  let until = asked.decided ? now() : asked.expiresAtMs;
  for (;;) {
    const wait = until - now();
    if (wait > 0) await condition(() => woken, wait);
    woken = false;
    const resumed = await resumeApproval(ref);
    if (resumed.status === 'pending') until = resumed.expiresAtMs;
    else if (resumed.status === 'queued') until = now() + resumed.recheckMs;
    else return { outcome: resumed, waitedMs: now() - started };
  }
}
