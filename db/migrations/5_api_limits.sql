-- API-side limits (DESIGN §8). Idempotent, so it can be read again (its test does).

-- Every trigger create counts the account's triggers (agent and user triggers together, QUOTA_TRIGGERS);
-- the existing indexes cover agent triggers by agent and user triggers by account, not both by account.
CREATE INDEX IF NOT EXISTS triggers_account ON triggers (account_id);

-- Incoming webhooks may emit only webhook.received (lib/events.ts): every other type is one the platform
-- emits itself, and an outsider emitting it would forge it. Rows written before that rule drop the
-- reserved types, so that what the API shows is what they emit (webhook.received, if nothing else is left).
UPDATE webhooks SET events = ARRAY['webhook.received'], updated_at = now()
WHERE direction = 'incoming' AND NOT (events <@ ARRAY['webhook.received']);

-- The fixed-window counters (auth endpoints, public hooks) need no durability: after a crash they start
-- from zero, which costs at most one extra window. Unlogged, a hit is no WAL write and waits for no WAL
-- flush, so a hook's counter row is held microseconds instead of a disk sync (HOOK_RATE_LIMIT is per second).
ALTER TABLE auth_rate_limits SET UNLOGGED;
