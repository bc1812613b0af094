import type { Seed, SeedResource } from './seed';

/**
 * The schemathesis.toml of a fuzz run, written next to its report: how the fuzzer signs in, and which seeded
 * resource the ids of each path name. Everything else (checks, modes, examples) is on the command line.
 */

/** A TOML basic string (JSON's escapes are TOML's). */
const str = (value: string) => JSON.stringify(value);

/**
 * Which seeded resource each path parameter names, by path. The fuzzer draws the seeded id for 9 requests in 10
 * and generates one for the rest (so unknown and malformed ids are still tried). DELETE is left out: the first
 * delete of a seeded resource would turn every later request on it into a 404; deletes get the ids of resources
 * the fuzzer created itself (schemathesis reuses ids from earlier responses) or generated ones.
 */
const PATH_RESOURCES: Array<[pathRegex: string, parameters: Partial<Record<string, SeedResource>>]> = [
  ['^/api/agents/\\{id\\}', { id: 'agent' }],
  ['^/api/agents/\\{agentId\\}/', { agentId: 'agent' }],
  ['^/api/connectors/\\{id\\}', { id: 'connector' }],
  ['^/api/tools/\\{id\\}', { id: 'tool' }],
  ['^/api/webhooks/\\{id\\}', { id: 'webhook', deliveryId: 'delivery' }],
  ['^/api/triggers/\\{id\\}', { id: 'agentTrigger', fireId: 'agentTriggerFire' }],
  ['^/api/user-triggers/\\{id\\}', { id: 'userTrigger', fireId: 'userTriggerFire' }],
  ['^/api/runs/\\{id\\}', { id: 'run' }],
  ['^/api/team/\\{id\\}', { id: 'teamMember' }],
  ['^/api/invitations/\\{id\\}', { id: 'invitation' }],
  ['^/api/auth/api-keys/\\{id\\}', { id: 'apiKey' }],
  ['^/api/hooks/webhooks/\\{id\\}', { id: 'incomingWebhook' }],
  ['^/api/hooks/triggers/\\{webhookPath\\}', { webhookPath: 'webhookPath' }],
];

const SEEDED_ID_PROBABILITY = 0.9;

export function schemathesisConfig(seed: Seed): string {
  const lines: string[] = [
    '# Written by scripts/fuzz/config.ts for one run of `npm run fuzz`.',
    '',
    '# Sign in as the seeded user; the access token (15 minutes) is fetched again every 5 minutes.',
    '[auth.dynamic.openapi.bearer]',
    'path = "/api/auth/login"',
    `payload = { email = ${str(seed.email)}, password = ${str(seed.password)} }`,
    'extract_selector = "/accessToken"',
    '',
  ];
  for (const [name, id] of Object.entries(seed.ids)) lines.push(`[dictionaries.${name}]`, `values = [${str(id)}]`, '');
  for (const [pathRegex, parameters] of PATH_RESOURCES) {
    const bindings = Object.entries(parameters).map(
      ([parameter, resource]) => `${str(`path.${parameter}`)} = { dictionary = ${str(resource!)}, probability = ${SEEDED_ID_PROBABILITY} }`,
    );
    lines.push('[[operations]]', `include-path-regex = ${str(pathRegex)}`, 'exclude-method = "DELETE"', `parameters = { ${bindings.join(', ')} }`, '');
  }
  return lines.join('\n');
}
