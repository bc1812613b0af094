-- Limits that keep one tenant from flooding or stopping the engine (DESIGN §8).

-- Chains are bounded in width: an event caused by a fire or a run carries the root event of its chain
-- (null on rows written before this migration, and by hand: such an event is its own root). The root's
-- chain_fires counts every fire its chain has made, up to CHAIN_FIRE_BUDGET.
ALTER TABLE events ADD COLUMN root_event_id uuid;
ALTER TABLE events ADD COLUMN chain_fires integer NOT NULL DEFAULT 0;
-- The event's fan-out, once: 'done' with its counts, or 'failed' for good with the reason (never silently lost).
ALTER TABLE events ADD COLUMN dispatch_status text CHECK (dispatch_status IN ('done', 'failed'));
ALTER TABLE events ADD COLUMN dispatch_result jsonb;
ALTER TABLE events ADD COLUMN dispatch_error text;

-- A fire's chain: the root event it counts against (event fires), or the event it emitted (other fires).
ALTER TABLE fires ADD COLUMN root_event_id uuid;
-- 'throttled': a schedule or event fire over the account's FIRES_PER_MINUTE; not counted, nothing started.
-- 'skipped' now also covers a trigger linked to a template or paused agent.
ALTER TABLE fires DROP CONSTRAINT fires_status_check;
ALTER TABLE fires ADD CONSTRAINT fires_status_check CHECK (status IN ('fired', 'skipped', 'throttled'));
CREATE INDEX fires_root ON fires (root_event_id) WHERE root_event_id IS NOT NULL;

-- FIRES_PER_MINUTE: one fixed one-minute window per account, shared by the API (manual and hook fires)
-- and the worker (schedule and event fires). A fire over the limit does not count.
CREATE TABLE account_fire_windows (
  account_id   uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  window_start timestamptz NOT NULL,
  fires        integer NOT NULL
);

-- DELIVERY_CONCURRENCY_PER_WEBHOOK: one row per delivery attempt in flight ('holding': a lease that
-- expires after the attempt's time limit, so a killed worker cannot keep its slot) or waiting for a
-- slot (in line by `since`; a waiter that stops asking expires too).
CREATE TABLE delivery_slots (
  webhook_id  uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  delivery_id uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  generation  integer NOT NULL,
  holding     boolean NOT NULL,
  since       timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (delivery_id, generation)
);
CREATE INDEX delivery_slots_webhook ON delivery_slots (webhook_id, holding, since);
