-- When a recovery gave each delivery its new generation: a delivery re-sent by a recovery less than
-- RECOVER_INTERVAL ago is not re-sent by the next one (README § Webhooks). Rows written before this
-- migration take their recovery's time of asking.
ALTER TABLE delivery_recovery_items ADD COLUMN recovered_at timestamptz;
UPDATE delivery_recovery_items i SET recovered_at = r.created_at FROM delivery_recoveries r WHERE r.id = i.recovery_id;
ALTER TABLE delivery_recovery_items ALTER COLUMN recovered_at SET DEFAULT now(), ALTER COLUMN recovered_at SET NOT NULL;
-- (The next recovery looks a delivery's re-sends up by delivery_recovery_items_delivery, migration 14: a
-- delivery has a few rows at most.)

-- Live run streams open now (GET /api/runs/:id/events), one row each, so that RUN_STREAMS_PER_USER holds
-- across every API process: the process renews its streams' rows every RUN_STREAMS_CHECK_MS and deletes a
-- row when its stream ends; the rows of a process that died stop counting once they expire. Unlogged: the
-- rows live seconds, and after a crash of Postgres the processes write their streams' rows again.
CREATE UNLOGGED TABLE run_stream_leases (
  id         uuid PRIMARY KEY,
  user_id    uuid NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX run_stream_leases_user ON run_stream_leases (user_id, expires_at);
CREATE INDEX run_stream_leases_expires ON run_stream_leases (expires_at);
