-- People in the loop (docs/api.md § Approvals): a tool may require a person's yes before a model run
-- calls it. The run then waits (status `waiting`) with an `approval` step and an approval row; a decision
-- is written here first and reaches the run's workflow by the outbox (kind `signal`).
ALTER TABLE tools ADD COLUMN requires_approval boolean NOT NULL DEFAULT false;

ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check CHECK (status IN ('queued', 'running', 'waiting', 'succeeded', 'failed')) NOT VALID;
ALTER TABLE runs VALIDATE CONSTRAINT runs_status_check;

ALTER TABLE run_steps DROP CONSTRAINT run_steps_type_check;
ALTER TABLE run_steps ADD CONSTRAINT run_steps_type_check CHECK (type IN ('tool', 'model', 'approval')) NOT VALID;
ALTER TABLE run_steps VALIDATE CONSTRAINT run_steps_type_check;

ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('schedule', 'workflow', 'signal')) NOT VALID;
ALTER TABLE outbox VALIDATE CONSTRAINT outbox_kind_check;

CREATE TABLE approvals (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  run_id       uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step_index   integer NOT NULL,
  agent_id     uuid NOT NULL,
  tool_id      uuid,
  function     text,
  arguments    jsonb,
  -- The JSON Schema the edited arguments of an approve are checked against (the function offered to the model).
  parameters   jsonb NOT NULL DEFAULT '{"type":"object"}',
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'cancelled')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  decided_at   timestamptz,
  decided_by   uuid,
  comment      text,
  UNIQUE (run_id, step_index)
);
-- An approval step names its approval (GET /api/runs/:id/steps `approvalId`).
ALTER TABLE run_steps ADD COLUMN approval_id uuid;

CREATE INDEX approvals_account_list ON approvals (account_id, created_at DESC, id DESC);
CREATE INDEX approvals_account_pending ON approvals (account_id, created_at DESC, id DESC) WHERE status = 'pending';

-- A run that ends (cancelled, timed out, failed) while it waits: its approval can no longer be decided.
CREATE FUNCTION cancel_pending_approvals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE approvals SET status = 'cancelled', decided_at = now() WHERE run_id = NEW.id AND status = 'pending';
  RETURN NULL;
END $$;
CREATE TRIGGER runs_ended_cancel_approvals AFTER UPDATE OF status ON runs
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('succeeded', 'failed'))
  EXECUTE FUNCTION cancel_pending_approvals();

-- The run's live stream (api/services/run-events.ts) hears a run begin to wait as it hears a step finish.
CREATE TRIGGER runs_waiting AFTER UPDATE OF status ON runs
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status = 'waiting')
  EXECUTE FUNCTION notify_run_ended();
