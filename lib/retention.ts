/**
 * What retention deletes (docs/operations.md § Retention), one step per kind of row, in this order:
 * - `deliveries` (with their attempts) before `events`: an event is deleted only once no delivery refers
 *   to it, so deleting it never cascades into deliveries (and an event with a pending delivery stays);
 * - `fires` before `runs` and `events`: the fires that refer to an old run or event are themselves old,
 *   so few `SET NULL`s are left to do.
 * Plain data: the workflow (deterministic) and the CLI read it alike.
 */
export const RETENTION_STEPS = [
  'deliveries',
  'fires',
  'runs',
  'events',
  'hook_receipts',
  'idempotency_keys',
  'rate_limits',
  'refresh_tokens',
  // Added later, so last: a run already under way when a worker with them starts replays its steps so far
  // unchanged. `recoveries` after `deliveries`: their items mostly went with their deliveries.
  'missed_fires',
  'schedule_corrections',
  'recoveries',
  'thread_messages',
  'schedule_history',
  'usage_days',
] as const;

export type RetentionStep = (typeof RETENTION_STEPS)[number];

/** Idempotency records are replayed for 24 h (README Conventions), then deleted. */
export const IDEMPOTENCY_KEEP_HOURS = 24;
