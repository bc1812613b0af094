-- Agent runs made of durable steps (DESIGN §8 Runs, §9): every tool call (and, later, every model call)
-- is its own activity and its own row, so a run that resumes after a crash never repeats a step
-- that finished.

CREATE TABLE run_steps (
  run_id      uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  -- Position in the run, from 0; the order the steps are made in.
  step_index  integer NOT NULL CHECK (step_index >= 0),
  type        text NOT NULL CHECK (type IN ('tool', 'model')),
  -- A tool step: the run output's key for it (the tool's name, `<name> (2)` when repeated).
  name        text NOT NULL,
  -- The tool a tool step calls (no foreign key: a step keeps its history when its tool is deleted).
  tool_id     uuid,
  tool_type   text,
  -- The step's own arguments; null when it takes the run's input (the default executor's tool steps).
  input       jsonb,
  -- What the step returned (at most 256 KiB, else { truncated, bytes }), or why it failed.
  output      jsonb,
  error       text,
  usage       jsonb,
  -- Set when an attempt starts the call (again, if an attempt died); finished_at once, when it returned.
  started_at  timestamptz,
  finished_at timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, step_index)
);

-- A queued run's last check-in (its workflow asking for a slot): a queued run keeps its place in its
-- account's line while it checks in, and is passed over once it has been silent for a while.
ALTER TABLE runs ADD COLUMN waiting_at timestamptz;

-- The line of an account's runs waiting for, or holding, a slot (RUN_CONCURRENCY_PER_ACCOUNT).
CREATE INDEX runs_account_line ON runs (account_id, created_at, id) WHERE status IN ('queued', 'running');
