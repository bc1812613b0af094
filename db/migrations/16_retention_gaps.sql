-- Retention of the tables migration 8 did not cover (README "Retention", db/repositories/retention.ts): each
-- batch finds its rows oldest first on an index of the column it selects by. As in migration 8, IF NOT EXISTS:
-- on a large database build the indexes beforehand with CREATE INDEX CONCURRENTLY under the same names.
-- (trigger_missed_fires and schedule_corrections have their created_at indexes since migration 11.)

-- Finished recoveries (their items cascade); thread messages past RETENTION_DAYS and their agent's memory.
CREATE INDEX IF NOT EXISTS delivery_recoveries_created ON delivery_recoveries (created_at);
CREATE INDEX IF NOT EXISTS thread_messages_created ON thread_messages (created_at);

-- A schedule version ends when the next one of its trigger begins: `valid_until` is that next version's
-- `valid_from` (null for the version in force now), written by the database when it records the next one.
-- Retention deletes a version that ended before its horizon; the version in force at the horizon, and every
-- later one, stay (expected fires are asked for within RETENTION_DAYS only). The partial index holds only
-- ended versions, so a batch never walks the versions in force.
ALTER TABLE trigger_schedule_history ADD COLUMN valid_until timestamptz;

UPDATE trigger_schedule_history h SET valid_until = n.valid_from
FROM (
  SELECT id, lead(valid_from) OVER (PARTITION BY trigger_id ORDER BY valid_from, id) AS valid_from FROM trigger_schedule_history
) n
WHERE n.id = h.id AND n.valid_from IS NOT NULL;

CREATE INDEX IF NOT EXISTS trigger_schedule_history_ended ON trigger_schedule_history (valid_until) WHERE valid_until IS NOT NULL;

CREATE OR REPLACE FUNCTION record_trigger_schedule() RETURNS trigger LANGUAGE plpgsql AS $$
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
  -- The version in force ends as this one begins (the same now(): valid_from's default).
  UPDATE trigger_schedule_history SET valid_until = now() WHERE trigger_id = NEW.id AND valid_until IS NULL;
  INSERT INTO trigger_schedule_history (trigger_id, type, enabled, cron_expression, timezone, overlap_policy, catchup_window)
  VALUES (NEW.id, NEW.type, NEW.enabled, NEW.config_json ->> 'cronExpression', NEW.config_json ->> 'timezone',
          NEW.config_json ->> 'overlapPolicy', NEW.config_json ->> 'catchupWindow');
  RETURN NEW;
END $$;

-- The outbox lookup of a workflow's start by its id (OutboxRepository.hasStart, when a delivery's workflow is
-- not found): without it, each lookup scans the outbox. payload never changes once written.
CREATE INDEX IF NOT EXISTS outbox_workflow_id ON outbox ((payload ->> 'workflowId')) WHERE kind = 'workflow';
