-- Operating the engine (README "Operating it"): what GET /metrics counts, what a schedule's expected fires are
-- judged against, and an endpoint's health. Everything here is written by the database itself (triggers) or
-- by the worker's reconciler: the code that records fires, deliveries and runs is unchanged.
--
-- On a large existing database, build the indexes beforehand with CREATE INDEX CONCURRENTLY under the same
-- names (IF NOT EXISTS then skips them); the two backfills below read each table once.

-- /metrics counts rows newer than its last scrape: these make each scrape one short index range.
CREATE INDEX IF NOT EXISTS delivery_attempts_created ON delivery_attempts (created_at);
CREATE INDEX IF NOT EXISTS runs_finished ON runs (finished_at) WHERE finished_at IS NOT NULL;

-- A delivery's finishing time: set when its status leaves 'pending', cleared when a manual retry makes it
-- pending again. Only the update that finishes a delivery touches the index (status changes then anyway),
-- so the updates of its attempts stay HOT.
ALTER TABLE deliveries ADD COLUMN finished_at timestamptz;
UPDATE deliveries SET finished_at = updated_at WHERE status <> 'pending';
CREATE FUNCTION delivery_finished_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IS DISTINCT FROM OLD.status THEN
    NEW.finished_at := CASE WHEN NEW.status = 'pending' THEN NULL ELSE now() END;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER deliveries_finished_at BEFORE UPDATE OF status ON deliveries
  FOR EACH ROW EXECUTE FUNCTION delivery_finished_at();
CREATE INDEX IF NOT EXISTS deliveries_finished ON deliveries (finished_at) WHERE finished_at IS NOT NULL;

-- An endpoint's health (GET /api/webhooks/:id/stats) reads its attempts by webhook and time: each attempt
-- carries its delivery's webhook, filled in here as it is inserted.
ALTER TABLE delivery_attempts ADD COLUMN webhook_id uuid;
UPDATE delivery_attempts a SET webhook_id = d.webhook_id FROM deliveries d WHERE d.id = a.delivery_id;
CREATE FUNCTION delivery_attempt_webhook() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.webhook_id := (SELECT webhook_id FROM deliveries WHERE id = NEW.delivery_id);
  RETURN NEW;
END $$;
CREATE TRIGGER delivery_attempts_webhook BEFORE INSERT ON delivery_attempts
  FOR EACH ROW EXECUTE FUNCTION delivery_attempt_webhook();
CREATE INDEX IF NOT EXISTS delivery_attempts_webhook ON delivery_attempts (webhook_id, created_at);

-- A schedule fire by its trigger and scheduled time (expected fires join on it).
CREATE INDEX IF NOT EXISTS fires_scheduled ON fires (trigger_id, scheduled_at) WHERE scheduled_at IS NOT NULL;

-- What a cron/schedule trigger was, from when: one row when it is created and one per change of what its
-- schedule depends on (type, enabled, expression, time zone, overlap policy, catch-up window), written by the
-- database on every path that changes it. Expected fires are computed, interval by interval, from the
-- version in force; a disabled interval explains the fires it did not make.
CREATE TABLE trigger_schedule_history (
  id              bigserial PRIMARY KEY,
  trigger_id      uuid NOT NULL REFERENCES triggers (id) ON DELETE CASCADE,
  valid_from      timestamptz NOT NULL DEFAULT now(),
  type            text NOT NULL,
  enabled         boolean NOT NULL,
  cron_expression text,
  timezone        text,
  overlap_policy  text,
  catchup_window  text
);
CREATE INDEX trigger_schedule_history_trigger ON trigger_schedule_history (trigger_id, valid_from, id);

CREATE FUNCTION record_trigger_schedule() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT (NEW.type IN ('schedule', 'cron') OR (TG_OP = 'UPDATE' AND OLD.type IN ('schedule', 'cron'))) THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'UPDATE'
     AND NEW.type = OLD.type AND NEW.enabled = OLD.enabled
     AND NEW.config_json -> 'cronExpression' IS NOT DISTINCT FROM OLD.config_json -> 'cronExpression'
     AND NEW.config_json -> 'timezone' IS NOT DISTINCT FROM OLD.config_json -> 'timezone'
     AND NEW.config_json -> 'overlapPolicy' IS NOT DISTINCT FROM OLD.config_json -> 'overlapPolicy'
     AND NEW.config_json -> 'catchupWindow' IS NOT DISTINCT FROM OLD.config_json -> 'catchupWindow' THEN
    RETURN NEW;
  END IF;
  INSERT INTO trigger_schedule_history (trigger_id, type, enabled, cron_expression, timezone, overlap_policy, catchup_window)
  VALUES (NEW.id, NEW.type, NEW.enabled, NEW.config_json ->> 'cronExpression', NEW.config_json ->> 'timezone',
          NEW.config_json ->> 'overlapPolicy', NEW.config_json ->> 'catchupWindow');
  RETURN NEW;
END $$;
CREATE TRIGGER triggers_schedule_history
  AFTER INSERT OR UPDATE OF type, config_json, enabled ON triggers
  FOR EACH ROW EXECUTE FUNCTION record_trigger_schedule();

-- Triggers that exist already: their present state, from their creation (what changed before is not known).
INSERT INTO trigger_schedule_history (trigger_id, valid_from, type, enabled, cron_expression, timezone, overlap_policy, catchup_window)
SELECT id, created_at, type, enabled, config_json ->> 'cronExpression', config_json ->> 'timezone',
       config_json ->> 'overlapPolicy', config_json ->> 'catchupWindow'
FROM triggers WHERE type IN ('schedule', 'cron');

-- Expected fires found missed (no fire, no reason) by the reconciler: one row, and one trigger.missed event,
-- per trigger and scheduled time.
CREATE TABLE trigger_missed_fires (
  trigger_id   uuid NOT NULL REFERENCES triggers (id) ON DELETE CASCADE,
  scheduled_at timestamptz NOT NULL,
  event_id     uuid,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (trigger_id, scheduled_at)
);
CREATE INDEX trigger_missed_fires_created ON trigger_missed_fires (created_at);

-- How far the reconciler has looked for missed fires (one row): each sweep looks at the times after it.
CREATE TABLE missed_fire_checks (
  singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  checked_until timestamptz NOT NULL
);

-- Each difference the reconciler's sweep found between Temporal's schedules and Postgres, and corrected.
-- No foreign key: an orphaned schedule's trigger does not exist.
CREATE TABLE schedule_corrections (
  id         bigserial PRIMARY KEY,
  trigger_id uuid NOT NULL,
  reason     text NOT NULL CHECK (reason IN ('missing', 'orphaned', 'paused', 'unpaused')),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedule_corrections_created ON schedule_corrections (created_at);
