-- Agents that think (the model executor): conversation threads, model steps planned by earlier steps,
-- and a notification per finished step or run for live run events.

-- The conversation a run belongs to (runs of one agent with the same thread share their messages), and
-- which executor made the run ('tools': the agent's tools in order; 'model': a language model calling
-- tools), set when it starts running.
ALTER TABLE runs ADD COLUMN thread_id text CHECK (char_length(thread_id) BETWEEN 1 AND 200);
ALTER TABLE runs ADD COLUMN executor text CHECK (executor IN ('tools', 'model'));

-- The step whose answer added this one (a model step adds the tool calls it asks for and the model step
-- after them); null for the steps planned when the run started. A retried model step answers the same
-- steps again from here.
ALTER TABLE run_steps ADD COLUMN planned_by integer;
CREATE INDEX run_steps_planned_by ON run_steps (run_id, planned_by) WHERE planned_by IS NOT NULL;

-- The messages of a thread: each succeeded model run adds the user's message (its input; at the time the
-- run was created) and the model's answer. The model sees the newest of them (memoryConfig).
CREATE TABLE thread_messages (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id uuid NOT NULL,
  agent_id   uuid NOT NULL,
  thread_id  text NOT NULL,
  -- No foreign key to runs: a thread outlives the retention of the runs that made it.
  run_id     uuid,
  role       text NOT NULL CHECK (role IN ('user', 'assistant')),
  content    text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (agent_id, account_id) REFERENCES agents (id, account_id) ON DELETE CASCADE
);
CREATE INDEX thread_messages_window ON thread_messages (agent_id, thread_id, created_at DESC, id DESC);

-- Live run events: one NOTIFY per finished step and per ended run, on channel run_events with the run's
-- id, so each API process listens on one connection and reads a run's progress only when it moved.
CREATE FUNCTION notify_run_step_finished() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('run_events', NEW.run_id::text);
  RETURN NULL;
END $$;

CREATE FUNCTION notify_run_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('run_events', NEW.id::text);
  RETURN NULL;
END $$;

CREATE TRIGGER run_steps_finished AFTER UPDATE OF finished_at ON run_steps
  FOR EACH ROW WHEN (OLD.finished_at IS NULL AND NEW.finished_at IS NOT NULL)
  EXECUTE FUNCTION notify_run_step_finished();

CREATE TRIGGER runs_ended AFTER UPDATE OF status ON runs
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('succeeded', 'failed'))
  EXECUTE FUNCTION notify_run_ended();
