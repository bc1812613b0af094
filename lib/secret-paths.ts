import type { ConnectorType, ToolType, TriggerKind } from './resource-types';
import type { Config, SecretPath } from './secret-config';

/**
 * Where each resource keeps its secrets inside configJson (docs/api.md § Secrets): sealed at rest, masked in
 * responses. The API reads these to seal and present; the worker to open a run's tool secrets and
 * the hook to check a trigger's token.
 */

export const CONNECTOR_SECRET_PATHS: Record<ConnectorType, readonly SecretPath[]> = {
  discord: [['botToken']],
  slack: [['botToken'], ['signingSecret']],
  telegram: [['botToken']],
};

export const TRIGGER_SECRET_PATHS: Record<TriggerKind, readonly SecretPath[]> = {
  schedule: [],
  cron: [],
  webhook: [['secretToken']],
  event: [],
  agent_finished: [],
  agent_output: [],
};

/**
 * Custom tool headers whose values are not secrets (names compared in any case). Every other header's
 * value is one: a credential hides in `Cookie`, `X-Auth`, `X-Session` as well as in `Authorization`.
 */
export const PLAIN_HEADERS: ReadonlySet<string> = new Set(['content-type', 'accept', 'accept-language', 'user-agent']);

/** A custom or MCP tool's secrets are the values of all its headers but PLAIN_HEADERS. */
export function toolSecretPaths(type: ToolType, config: Config): SecretPath[] {
  if ((type !== 'custom' && type !== 'mcp') || !config.headers || typeof config.headers !== 'object') return [];
  return Object.keys(config.headers).filter((name) => !PLAIN_HEADERS.has(name.toLowerCase())).map((name) => ['headers', name]);
}
