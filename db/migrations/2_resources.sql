-- Connectors, tools, webhooks, triggers (agent and user), team members.
-- Secret values inside config_json (and webhooks.secret_sealed) are AES-256-GCM sealed by the API
-- before they reach this database; no column here ever holds a plaintext secret.

-- Lets children reference (agent, account) together, so a child can never point at another account's agent.
ALTER TABLE agents ADD CONSTRAINT agents_id_account_key UNIQUE (id, account_id);

CREATE TABLE connectors (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  agent_id    uuid NOT NULL,
  type        text NOT NULL CHECK (type IN ('discord', 'slack', 'telegram')),
  name        text NOT NULL,
  config_json jsonb NOT NULL DEFAULT '{}',
  enabled     boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (agent_id, account_id) REFERENCES agents (id, account_id) ON DELETE CASCADE
);
CREATE INDEX connectors_page ON connectors (agent_id, created_at DESC, id DESC);

CREATE TABLE tools (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  agent_id    uuid NOT NULL,
  type        text NOT NULL CHECK (type IN ('dex_pairs', 'prediction_markets', 'coin_prices', 'custom')),
  name        text NOT NULL,
  description text NOT NULL DEFAULT '',
  config_json jsonb NOT NULL DEFAULT '{}',
  enabled     boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (agent_id, account_id) REFERENCES agents (id, account_id) ON DELETE CASCADE
);
CREATE INDEX tools_page ON tools (agent_id, created_at DESC, id DESC);

CREATE TABLE webhooks (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id        uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name              text NOT NULL,
  direction         text NOT NULL CHECK (direction IN ('incoming', 'outgoing')),
  -- Outgoing: the target. Incoming: null; the display URL is derived from PUBLIC_BASE_URL and the id.
  url               text,
  secret_sealed     text,
  events            text[] NOT NULL,
  enabled           boolean NOT NULL DEFAULT true,
  trigger_count     bigint NOT NULL DEFAULT 0,
  last_triggered_at timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CHECK (direction = 'incoming' OR url IS NOT NULL)
);
CREATE INDEX webhooks_page ON webhooks (account_id, created_at DESC, id DESC);

-- One table, two APIs: agent triggers (scope 'agent', agent required, deleted with the agent) and
-- standalone user triggers (scope 'user', agent optional, unlinked when the agent is deleted).
CREATE TABLE triggers (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id    uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  scope         text NOT NULL CHECK (scope IN ('agent', 'user')),
  agent_id      uuid,
  type          text NOT NULL CHECK (type IN ('schedule', 'cron', 'webhook', 'event', 'agent_finished', 'agent_output')),
  name          text NOT NULL,
  config_json   jsonb NOT NULL DEFAULT '{}',
  enabled       boolean NOT NULL DEFAULT true,
  webhook_path  text GENERATED ALWAYS AS (CASE WHEN type = 'webhook' THEN config_json ->> 'webhookPath' END) STORED,
  fire_count    bigint NOT NULL DEFAULT 0,
  last_fired_at timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  CHECK (scope = 'user' OR agent_id IS NOT NULL),
  -- Agent triggers are deleted explicitly before their agent (same transaction); for user triggers this nulls the link.
  FOREIGN KEY (agent_id, account_id) REFERENCES agents (id, account_id) ON DELETE SET NULL (agent_id)
);
CREATE UNIQUE INDEX triggers_webhook_path_key ON triggers (webhook_path) WHERE webhook_path IS NOT NULL;
CREATE INDEX triggers_agent_page ON triggers (agent_id, created_at DESC, id DESC) WHERE scope = 'agent';
CREATE INDEX triggers_user_page ON triggers (account_id, created_at DESC, id DESC) WHERE scope = 'user';
CREATE INDEX triggers_agent_link ON triggers (agent_id) WHERE agent_id IS NOT NULL;

CREATE TABLE team_members (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  email       text NOT NULL,
  role        text NOT NULL CHECK (role IN ('admin', 'editor', 'viewer')),
  -- Custom booleans that override the role's defaults; the API shows the effective set.
  permissions jsonb NOT NULL DEFAULT '{}',
  status      text NOT NULL CHECK (status IN ('invited', 'active', 'removed')),
  user_id     uuid REFERENCES users (id) ON DELETE SET NULL,
  invited_by  uuid REFERENCES users (id) ON DELETE SET NULL,
  invited_at  timestamptz NOT NULL DEFAULT now(),
  accepted_at timestamptz,
  removed_at  timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX team_members_email_key ON team_members (account_id, lower(email)) WHERE status <> 'removed';
CREATE INDEX team_members_page ON team_members (account_id, created_at DESC, id DESC);
CREATE INDEX team_members_invitations ON team_members (lower(email)) WHERE status = 'invited';
