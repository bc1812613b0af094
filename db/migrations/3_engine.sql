-- The durable engine (DESIGN §1, §4): Postgres is the truth, Temporal holds derived state.
-- Anything Temporal should do is first written here, in the transaction of its cause:
--   outbox      hand-offs to Temporal not yet acknowledged (schedule syncs, workflow starts)
--   events      every emitted event; its dispatch workflow is `event:<id>`
--   fires       one row per trigger fire, unique per (trigger, fire key): the fire counts once
--   runs        agent runs, `run:<id>`
--   deliveries  one per (event, webhook), `delivery:<id>`; delivery_attempts keep each attempt's result

CREATE TABLE outbox (
  id           bigserial PRIMARY KEY,
  -- 'schedule': converge the Temporal Schedule of payload.triggerId to its row (create/update/pause/delete).
  -- 'workflow': start payload.workflowType with payload.workflowId (already started = done).
  kind         text NOT NULL CHECK (kind IN ('schedule', 'workflow')),
  payload      jsonb NOT NULL,
  attempts     integer NOT NULL DEFAULT 0,
  last_error   text,
  -- A row is claimed by pushing this into the future (a lease); a failed hand-off backs off the same way.
  available_at timestamptz NOT NULL DEFAULT now(),
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_available ON outbox (available_at, id);

-- Every write that can change a trigger's schedule queues its sync in the same transaction, whichever
-- code path (or cascade) made it: the reconciler then converges Temporal to the row, or removes the
-- schedule when the row is gone or no longer scheduled.
CREATE FUNCTION queue_schedule_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.type IN ('schedule', 'cron') THEN
      INSERT INTO outbox (kind, payload) VALUES ('schedule', jsonb_build_object('triggerId', OLD.id));
    END IF;
    RETURN OLD;
  END IF;
  IF NEW.type IN ('schedule', 'cron') OR (TG_OP = 'UPDATE' AND OLD.type IN ('schedule', 'cron')) THEN
    INSERT INTO outbox (kind, payload) VALUES ('schedule', jsonb_build_object('triggerId', NEW.id));
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER triggers_schedule_sync
  AFTER INSERT OR DELETE OR UPDATE OF type, config_json, enabled, agent_id ON triggers
  FOR EACH ROW EXECUTE FUNCTION queue_schedule_sync();

-- The next fire time Temporal reports for the trigger's schedule (refreshed on sync and after each fire).
ALTER TABLE triggers ADD COLUMN next_fire_at timestamptz;

CREATE TABLE events (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id        uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  type              text NOT NULL,
  data              jsonb NOT NULL,
  -- How many chained fires led here; fires from an event at depth 10 are not made (cycle guard).
  chain_depth       integer NOT NULL DEFAULT 0,
  -- webhook.test: delivered to this webhook only, and to no trigger.
  target_webhook_id uuid REFERENCES webhooks (id) ON DELETE CASCADE,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_page ON events (account_id, created_at DESC, id DESC);

CREATE TABLE runs (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  agent_id    uuid NOT NULL,
  trigger_id  uuid REFERENCES triggers (id) ON DELETE SET NULL,
  fire_id     uuid,
  status      text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  input       jsonb,
  output      jsonb,
  error       text,
  chain_depth integer NOT NULL DEFAULT 0,
  started_at  timestamptz,
  finished_at timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (agent_id, account_id) REFERENCES agents (id, account_id) ON DELETE CASCADE
);
CREATE INDEX runs_page ON runs (agent_id, created_at DESC, id DESC);

CREATE TABLE fires (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  trigger_id   uuid NOT NULL REFERENCES triggers (id) ON DELETE CASCADE,
  -- From the workflow id `fire:<triggerId>:<fireKey>`: `schedule-<time>`, `manual-<id>`, `hook-<id>`, `event-<eventId>`.
  fire_key     text NOT NULL,
  source       text NOT NULL CHECK (source IN ('schedule', 'manual', 'webhook', 'event')),
  -- 'skipped': the trigger was disabled by the time the fire ran; not counted.
  status       text NOT NULL CHECK (status IN ('fired', 'skipped')),
  run_id       uuid REFERENCES runs (id) ON DELETE SET NULL,
  event_id     uuid REFERENCES events (id) ON DELETE SET NULL,
  payload      jsonb,
  chain_depth  integer NOT NULL DEFAULT 0,
  scheduled_at timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (trigger_id, fire_key)
);
CREATE INDEX fires_page ON fires (trigger_id, created_at DESC, id DESC);

CREATE TABLE deliveries (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id       uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  webhook_id       uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id         uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
  -- Bumped by a manual retry: attempts of an older generation's workflow are no longer made.
  generation       integer NOT NULL DEFAULT 0,
  attempts         integer NOT NULL DEFAULT 0,
  last_status_code integer,
  last_error       text,
  next_attempt_at  timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, webhook_id)
);
CREATE INDEX deliveries_page ON deliveries (webhook_id, created_at DESC, id DESC);
CREATE INDEX deliveries_pending ON deliveries (webhook_id) WHERE status = 'pending';

CREATE TABLE delivery_attempts (
  delivery_id uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  generation  integer NOT NULL,
  attempt     integer NOT NULL,
  status_code integer,
  error       text,
  duration_ms integer NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (delivery_id, generation, attempt)
);

-- Incoming webhook requests signed with a `webhook-id`: a sender's retry of the same message is
-- accepted again (202, same answer) but counted and emitted once.
CREATE TABLE hook_receipts (
  webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  message_id text NOT NULL,
  event_ids  uuid[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (webhook_id, message_id)
);
