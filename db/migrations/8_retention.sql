-- Retention (DESIGN §8, README "Retention"): the hourly `system:retention` workflow deletes old rows in small
-- batches, oldest first (db/repositories/retention.ts). These indexes let each batch find its rows without
-- scanning the table, and let the foreign keys' ON DELETE actions find the referencing rows.
--
-- IF NOT EXISTS: on a database already large, build them beforehand with CREATE INDEX CONCURRENTLY under the
-- same names (this migration runs in one transaction, and a plain CREATE INDEX blocks writes to the table
-- while it builds); the migration then has nothing left to do.
-- Only columns that never change (created_at), or change rarely, are indexed, so the hot updates of runs,
-- deliveries and rate-limit counters stay HOT.

CREATE INDEX IF NOT EXISTS events_created ON events (created_at);
CREATE INDEX IF NOT EXISTS fires_created ON fires (created_at);
CREATE INDEX IF NOT EXISTS runs_created ON runs (created_at);
CREATE INDEX IF NOT EXISTS deliveries_created ON deliveries (created_at);
CREATE INDEX IF NOT EXISTS hook_receipts_created ON hook_receipts (created_at);

-- Deleting a run or an event sets fires.run_id / fires.event_id to null: without these, each deleted row
-- would scan fires.
CREATE INDEX IF NOT EXISTS fires_run ON fires (run_id) WHERE run_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS fires_event ON fires (event_id) WHERE event_id IS NOT NULL;

-- Rate-limit windows that have ended; refresh tokens that can no longer be used.
CREATE INDEX IF NOT EXISTS auth_rate_limits_reset ON auth_rate_limits (reset_at);
CREATE INDEX IF NOT EXISTS refresh_tokens_expires ON refresh_tokens (expires_at);
CREATE INDEX IF NOT EXISTS refresh_tokens_revoked ON refresh_tokens (revoked_at) WHERE revoked_at IS NOT NULL;
