-- Workspaces (README "Working as a team"): members act in the account they joined, every write is audited,
-- invitations carry a token.

-- The acting-account lookup of every request that names another account (Account-Id): one index probe.
-- Unique: a user has at most one active membership per account (also implied by the email index, since a
-- membership is accepted only by the user with the invited email).
CREATE UNIQUE INDEX team_members_active_user ON team_members (account_id, user_id) WHERE status = 'active';
-- GET /api/accounts: the accounts a user is an active member of, newest membership first.
CREATE INDEX team_members_user_page ON team_members (user_id, created_at DESC, id DESC) WHERE status = 'active';

-- SHA-256 of the invitation token, shown once in the invite's response. Invitations made before this
-- migration have none and cannot be accepted: invite again.
ALTER TABLE team_members ADD COLUMN invite_token_hash text;

-- Who spent or credited the balance (null: the platform, e.g. the initial grant).
ALTER TABLE account_transactions ADD COLUMN actor_user_id uuid REFERENCES users (id) ON DELETE SET NULL;

-- Every write in an account with its actor, written in the write's own transaction.
CREATE TABLE audit_log (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id    uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  actor_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  action        text NOT NULL,
  resource_type text NOT NULL,
  resource_id   uuid,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_page ON audit_log (account_id, created_at DESC, id DESC);

-- An import creates an agent's tools, connectors and triggers in one transaction, where now() is a single
-- instant: the clock's time keeps created order (the order an agent's tools run in, and its lists) the order
-- of insertion.
ALTER TABLE tools ALTER COLUMN created_at SET DEFAULT clock_timestamp(), ALTER COLUMN updated_at SET DEFAULT clock_timestamp();
ALTER TABLE connectors ALTER COLUMN created_at SET DEFAULT clock_timestamp(), ALTER COLUMN updated_at SET DEFAULT clock_timestamp();
ALTER TABLE triggers ALTER COLUMN created_at SET DEFAULT clock_timestamp(), ALTER COLUMN updated_at SET DEFAULT clock_timestamp();
