-- When a recovery gave each delivery its new generation: a delivery re-sent by a recovery less than
-- RECOVER_INTERVAL ago is not re-sent by the next one (README § Webhooks). Rows written before this
-- migration take their recovery's time of asking.
ALTER TABLE delivery_recovery_items ADD COLUMN recovered_at timestamptz;
UPDATE delivery_recovery_items i SET recovered_at = r.created_at FROM delivery_recoveries r WHERE r.id = i.recovery_id;
ALTER TABLE delivery_recovery_items ALTER COLUMN recovered_at SET DEFAULT now(), ALTER COLUMN recovered_at SET NOT NULL;
-- (The next recovery looks a delivery's re-sends up by delivery_recovery_items_delivery, migration 14: a
-- delivery has a few rows at most.)
