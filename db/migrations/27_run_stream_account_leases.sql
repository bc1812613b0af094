-- RUN_STREAMS_PER_ACCOUNT counts across every API process (docs/api.md § Live run streams), as
-- RUN_STREAMS_PER_USER does: each place names the account its stream acts in. The table is unlogged and its
-- rows live for seconds, so the places written before this (no account) are dropped, not filled in: every
-- process renews its places every RUN_STREAMS_CHECK_MS and writes a missing one again.
DELETE FROM run_stream_leases;
ALTER TABLE run_stream_leases ADD COLUMN account_id uuid NOT NULL;
CREATE INDEX run_stream_leases_account ON run_stream_leases (account_id, expires_at);
