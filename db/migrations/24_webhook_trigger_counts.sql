-- A webhook's triggerCount and lastTriggered are counted beside its row, not in it: every call of an
-- incoming webhook and every event delivered to an outgoing one counted itself with an UPDATE of the
-- webhook's row, whose lock every other call and event of that webhook then waited for until the commit
-- (pg_stat_statements: 210–297 ms of waiting per message in a burst of 500 to one webhook). Each connection
-- now adds to a row of its own (the backend's pid modulo 64), so concurrent writers seldom meet, and a read
-- adds the rows to the count the webhook's row keeps from before (docs/adr/0013-webhook-counts-beside-the-row.md).
CREATE TABLE webhook_trigger_counts (
  webhook_id        uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  slot              smallint NOT NULL,
  trigger_count     bigint NOT NULL,
  last_triggered_at timestamptz NOT NULL,
  PRIMARY KEY (webhook_id, slot)
);
