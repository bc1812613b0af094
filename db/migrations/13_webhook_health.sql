-- Auto-disable (README "Webhooks"): an outgoing webhook whose every delivery attempt has failed for
-- WEBHOOK_DISABLE_AFTER is disabled by the engine. `failing_since` is the time of the first failed attempt
-- after the last success (null while the endpoint answers), set and cleared by the transaction that records
-- an attempt, so deciding is a comparison on the row; `disabled_reason` says why the engine disabled it
-- (null otherwise, and cleared when the webhook is enabled again).
ALTER TABLE webhooks ADD COLUMN failing_since timestamptz, ADD COLUMN disabled_reason text;
