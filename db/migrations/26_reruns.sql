-- Rerun from a step, and replay (docs/api.md § Rerun and replay). A rerun is a new run that names the run it
-- reruns and the step it goes on from; the steps before that step are copied into it (recorded, not made:
-- `copied`). The original may be deleted by retention before its reruns: the link is then cleared.
ALTER TABLE runs ADD COLUMN rerun_of_run_id uuid REFERENCES runs (id) ON DELETE SET NULL;
ALTER TABLE runs ADD COLUMN rerun_from_step integer CHECK (rerun_from_step >= 0);
-- GET /api/runs/:id lists a run's reruns, newest first; the foreign key's SET NULL finds them by it too.
CREATE INDEX runs_reruns ON runs (rerun_of_run_id, created_at DESC) WHERE rerun_of_run_id IS NOT NULL;

ALTER TABLE run_steps ADD COLUMN copied boolean NOT NULL DEFAULT false;

-- A replay of an agent's failed runs (POST /api/agents/:id/runs/replay): one row, worked through by its
-- workflow `replay:<id>` in batches, each a transaction that starts the reruns of its items.
CREATE TABLE run_replays (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  agent_id    uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  status      text NOT NULL CHECK (status IN ('failed')),
  since       timestamptz NOT NULL,
  until       timestamptz NOT NULL CHECK (since < until),
  -- The runs it reruns, chosen when it was asked for (its items).
  count       integer NOT NULL,
  -- Of those, the ones whose rerun has been started (or skipped: the run was deleted meanwhile).
  started     integer NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
-- One replay per agent per RECOVER_INTERVAL: the agent's latest.
CREATE INDEX run_replays_agent ON run_replays (agent_id, created_at DESC);

-- The runs a replay reruns; `rerun_id` once its rerun was started. `run_id` is a plain value: the run may be
-- deleted by retention before its turn (it is then skipped).
CREATE TABLE run_replay_items (
  replay_id  uuid NOT NULL REFERENCES run_replays (id) ON DELETE CASCADE,
  ord        integer NOT NULL,
  run_id     uuid NOT NULL,
  rerun_id   uuid,
  done       boolean NOT NULL DEFAULT false,
  PRIMARY KEY (replay_id, ord)
);

-- An agent's failed runs by creation time: what a replay chooses from.
CREATE INDEX runs_agent_failed ON runs (agent_id, created_at, id) WHERE status = 'failed';
