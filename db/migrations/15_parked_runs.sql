-- Runs past their account's RUN_CONCURRENCY_PER_ACCOUNT wait in Postgres, not in Temporal (lib/run-line.ts):
-- a run queued while its account's line is full is `parked`, with no workflow, until a slot frees; then
-- its workflow start is queued in the outbox. A flood of runs from one account no longer becomes a flood
-- of waiting workflows that every other account's runs queue behind on the Temporal server.
ALTER TABLE runs ADD COLUMN parked boolean NOT NULL DEFAULT false;
CREATE INDEX runs_parked ON runs (account_id, created_at, id) WHERE parked;
