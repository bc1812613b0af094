-- Recovering a webhook's failed deliveries (README § Webhooks, POST /api/webhooks/:id/recover): one row per
-- recovery, worked through by its workflow `recovery:<id>` in batches; `cursor_*` is the last delivery it
-- handled (keyset on the delivery's (created_at, id)), so a retried batch or a continued run resumes there.
CREATE TABLE delivery_recoveries (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id        uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  webhook_id        uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  since             timestamptz NOT NULL,
  until             timestamptz NOT NULL CHECK (since < until),
  status            text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'failed')),
  -- Failed deliveries created in [since, until) when the recovery was asked for.
  total             integer NOT NULL,
  -- Of those, the ones given a new generation so far.
  attempted         integer NOT NULL DEFAULT 0,
  cursor_created_at timestamptz,
  cursor_id         uuid,
  created_at        timestamptz NOT NULL DEFAULT now(),
  completed_at      timestamptz
);
CREATE INDEX delivery_recoveries_webhook ON delivery_recoveries (webhook_id, created_at DESC);

-- The generation each recovered delivery was given: its outcome is the recovery's succeeded / failed.
CREATE TABLE delivery_recovery_items (
  recovery_id uuid NOT NULL REFERENCES delivery_recoveries (id) ON DELETE CASCADE,
  delivery_id uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  generation  integer NOT NULL,
  PRIMARY KEY (recovery_id, delivery_id)
);
CREATE INDEX delivery_recovery_items_delivery ON delivery_recovery_items (delivery_id);

-- A webhook's failed deliveries by creation time: what a recovery counts and pages through.
CREATE INDEX IF NOT EXISTS deliveries_failed ON deliveries (webhook_id, created_at, id) WHERE status = 'failed';
