import path from 'node:path';
import type { Seed, SeedResource } from './seed';

/**
 * The schemathesis.toml of a fuzz run, written next to its report: how the fuzzer signs in, which seeded
 * resource the ids of each path name, realistic values for the fields whose rules JSON Schema cannot state, and
 * the hooks (hooks.py). Checks, modes and the number of examples are on the command line.
 */

/** A TOML basic string (JSON's escapes are TOML's). */
const str = (value: string) => JSON.stringify(value);
const list = (values: readonly string[]) => `[${values.map(str).join(', ')}]`;

/**
 * Which seeded values a path's parameters take, by the start of the path (the first match wins: pairs first).
 * DELETE is left out (below).
 */
const PATH_RESOURCES: Array<[prefix: string, parameters: Record<string, SeedResource>]> = [
  ['/api/webhooks/{id}/deliveries/{deliveryId}', { id: 'deliveryWebhook', deliveryId: 'delivery' }],
  ['/api/triggers/{id}/fires/{fireId}', { id: 'fireAgentTrigger', fireId: 'agentTriggerFire' }],
  ['/api/user-triggers/{id}/fires/{fireId}', { id: 'fireUserTrigger', fireId: 'userTriggerFire' }],
  ['/api/hooks/triggers/{webhookPath}', { webhookPath: 'webhookPath', 'x-trigger-token': 'triggerToken' }],
  ['/api/agents/{id}', { id: 'agent' }],
  ['/api/agents/{agentId}/', { agentId: 'agent' }],
  ['/api/connectors/{id}', { id: 'connector' }],
  ['/api/tools/{id}', { id: 'tool' }],
  ['/api/webhooks/{id}', { id: 'webhook' }],
  ['/api/triggers/{id}', { id: 'agentTrigger' }],
  ['/api/user-triggers/{id}', { id: 'userTrigger' }],
  ['/api/runs/{id}', { id: 'run' }],
  ['/api/team/{id}', { id: 'teamMember' }],
  ['/api/invitations/{id}', { id: 'invitation' }],
  ['/api/auth/api-keys/{id}', { id: 'apiKey' }],
  ['/api/hooks/webhooks/{id}', { id: 'incomingWebhook' }],
];

/**
 * A seeded id for 9 requests in 10, a generated one for the rest (so unknown ids are still tried; negative mode
 * sends malformed ones whatever this says).
 */
const SEEDED_ID_PROBABILITY = 0.9;

const cursor = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url');

/**
 * Values for fields whose rules a JSON Schema cannot state (a cron expression's syntax, an IANA zone, a duration
 * in range, a URL that parses), used in positive mode instead of generated strings, which would only ever test
 * the 400 those rules answer. Negative mode still sends values that break the schema. A list cursor is opaque:
 * only a cursor the API could have made is valid, so these are such cursors (keyset: created_at as Postgres
 * prints it and an id; a run's steps: an index).
 */
const VALUES = {
  keysetCursor: [cursor(['2999-01-01 00:00:00+00', 'ffffffff-ffff-4fff-bfff-ffffffffffff']), cursor(['2000-01-01 00:00:00.5+00', '00000000-0000-4000-8000-000000000000'])],
  indexCursor: [cursor([0]), cursor([3])],
  // Once a year at most: the triggers the fuzzer creates must not keep the worker busy firing.
  cronExpression: ['0 0 1 1 *', '@yearly', '15 10 1 1 *', '0 30 9 1 1 *', '@every 365d'],
  timezone: ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata'],
  catchupWindow: ['10s', '1h', '1h30m', '2d', '365d'],
  approvalTimeout: ['1m', '2h', '7d', '30d'],
  // A closed local port and a host that does not resolve here: deliveries and tool calls fail at once.
  url: ['http://127.0.0.1:9/fuzz', 'https://hooks.example.com/agent-platform'],
} as const;

const BODY_VALUES: Record<string, keyof typeof VALUES> = {
  'body.configJson.cronExpression': 'cronExpression',
  'body.configJson.timezone': 'timezone',
  // GET /api/schedule-preview: the same two, before a trigger is written.
  'query.cronExpression': 'cronExpression',
  'query.timezone': 'timezone',
  'body.configJson.catchupWindow': 'catchupWindow',
  'body.configJson.approvalTimeout': 'approvalTimeout',
  'body.configJson.endpoint': 'url',
  'body.url': 'url',
};

export function schemathesisConfig(seed: Seed, specPaths: readonly string[]): string {
  const binding = (dictionary: string, probability: number) => `{ dictionary = ${str(dictionary)}, probability = ${probability} }`;
  const lines: string[] = [
    '# Written by scripts/fuzz/config.ts for one run of `npm run fuzz`.',
    `hooks = ${str(path.join(__dirname, 'hooks.py'))}`,
    '',
    '# The API refuses strings Postgres cannot store (a NUL character, an unpaired surrogate) with 400, by design',
    '# (README: Conventions); generating them would only test that answer (test/api/bad-input covers it).',
    '[generation]',
    'codec = "utf-8"',
    'allow-x00 = false',
    '',
    '# Sign in as the seeded user; the access token (15 minutes) is fetched again every 5 minutes.',
    '[auth.dynamic.openapi.bearer]',
    'path = "/api/auth/login"',
    `payload = { email = ${str(seed.email)}, password = ${str(seed.password)} }`,
    'extract_selector = "/accessToken"',
    '',
  ];
  for (const [name, values] of Object.entries(seed.ids)) lines.push(`[dictionaries.${name}]`, `values = ${list(values)}`, '');
  for (const [name, values] of Object.entries(VALUES)) lines.push(`[dictionaries.${name}]`, `values = ${list(values)}`, '');

  lines.push('[parameters]', `${str('query.cursor')} = ${binding('keysetCursor', 1)}`, `${str('body.agentId')} = ${binding('agent', 1)}`);
  for (const [field, dictionary] of Object.entries(BODY_VALUES)) lines.push(`${str(field)} = ${binding(dictionary, 1)}`);
  lines.push('');

  // Deletes get no seeded id, and skip the coverage phase: schemathesis reuses ids it saw in responses, and the
  // coverage phase, which runs before the fuzzing phase, would delete seeded resources the fuzzing phase needs
  // (the fuzzing phase runs deletes after the other operations). Their coverage is the fuzzing phase's, in both
  // modes, and the stateful phase's (create, read, update, delete chains).
  lines.push('[[operations]]', 'include-method = "DELETE"', 'phases.coverage.enabled = false', '');

  // One entry per path (schemathesis takes an operation's parameters from the first entry that matches it).
  for (const specPath of specPaths) {
    const bindings = Object.entries(PATH_RESOURCES.find(([prefix]) => specPath.startsWith(prefix))?.[1] ?? {}).map(([parameter, resource]) => {
      const location = specPath.includes(`{${parameter}}`) ? 'path' : 'header';
      return `${str(`${location}.${parameter}`)} = ${binding(resource, SEEDED_ID_PROBABILITY)}`;
    });
    if (specPath === '/api/runs/{id}/steps') bindings.push(`${str('query.cursor')} = ${binding('indexCursor', 1)}`);
    if (bindings.length === 0) continue;
    lines.push('[[operations]]', `include-path = ${str(specPath)}`, 'exclude-method = "DELETE"', `parameters = { ${bindings.join(', ')} }`, '');
  }
  return lines.join('\n');
}
