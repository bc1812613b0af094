-- Users, accounts and the balance ledger, credentials, agents, idempotency records, auth rate limits.

CREATE TABLE users (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email         text NOT NULL,
  name          text NOT NULL DEFAULT '',
  password_hash text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

-- One account (workspace) per user; resources belong to the account.
CREATE TABLE accounts (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_user_id uuid NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
  name          text NOT NULL,
  -- Cached sum of the ledger, kept in the same transaction as every ledger entry.
  balance       bigint NOT NULL CHECK (balance >= 0),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE account_transactions (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id    uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  amount        bigint NOT NULL,
  reason        text NOT NULL,
  resource_id   uuid,
  balance_after bigint NOT NULL CHECK (balance_after >= 0),
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX account_transactions_page ON account_transactions (account_id, created_at DESC, id DESC);

-- Refresh tokens rotate within a family; reuse of a rotated token revokes the family.
CREATE TABLE refresh_tokens (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  family_id   uuid NOT NULL,
  token_hash  text NOT NULL UNIQUE,
  expires_at  timestamptz NOT NULL,
  rotated_at  timestamptz,
  revoked_at  timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

CREATE TABLE api_keys (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name         text NOT NULL,
  prefix       text NOT NULL,
  key_hash     text NOT NULL UNIQUE,
  last_used_at timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_page ON api_keys (user_id, created_at DESC, id DESC);

CREATE TABLE agents (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id     uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name           text NOT NULL,
  description    text NOT NULL DEFAULT '',
  goal           text NOT NULL DEFAULT '',
  persona        text NOT NULL DEFAULT '',
  voice          text NOT NULL DEFAULT '',
  system_prompt  text NOT NULL DEFAULT '',
  policies       jsonb NOT NULL DEFAULT '[]',
  memory_config  jsonb NOT NULL,
  config_json    jsonb NOT NULL DEFAULT '{}',
  status         text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'paused', 'template')),
  graph          jsonb NOT NULL DEFAULT '{"nodes": [], "edges": []}',
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agents_page ON agents (account_id, created_at DESC, id DESC);

-- First response to a POST with an Idempotency-Key, replayed for 24 h (DESIGN §2).
CREATE TABLE idempotency_keys (
  caller_id     uuid NOT NULL,
  key           text NOT NULL,
  request_hash  text NOT NULL,
  status_code   integer,            -- null while the first request is still in flight
  response_body text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (caller_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Fixed-window counters for the unauthenticated auth endpoints, shared by every API instance.
CREATE TABLE auth_rate_limits (
  key       text PRIMARY KEY,
  hits      integer NOT NULL,
  reset_at  timestamptz NOT NULL
);
