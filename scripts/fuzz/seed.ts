import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What the fuzzer needs before it starts: a user to sign in as, and resources of every kind, so that operations
 * with ids in their paths reach their handlers (a generated UUID names nothing: 404 before any logic runs).
 * - Three of each kind: schemathesis also sends ids it saw in responses, so a request may delete one, pause it,
 *   disable it or change its type; the others keep the rest of the run reaching the handlers.
 * - Pairs (a webhook and one of its deliveries, a trigger and one of its fires) have a dictionary each, one entry.
 * - The public hooks' targets (an incoming webhook, a webhook trigger) and an invitation to the fuzz user belong to
 *   a second account, which the fuzzer never signs in to: it cannot disable, retarget or delete them.
 */

export interface Seed {
  email: string;
  password: string;
  /** Seeded values per dictionary (config.ts binds path parameters to them). */
  ids: Record<SeedResource, string[]>;
}

export type SeedResource =
  | 'agent'
  | 'connector'
  | 'tool'
  | 'webhook'
  | 'deliveryWebhook'
  | 'delivery'
  | 'agentTrigger'
  | 'fireAgentTrigger'
  | 'agentTriggerFire'
  | 'userTrigger'
  | 'fireUserTrigger'
  | 'userTriggerFire'
  | 'run'
  | 'teamMember'
  | 'invitation'
  | 'apiKey'
  | 'incomingWebhook'
  | 'webhookPath'
  | 'triggerToken';

type Json = Record<string, unknown>;

const COPIES = 3;
const hex = () => crypto.randomBytes(4).toString('hex');

export async function seed(baseUrl: string, log: (message: string) => void): Promise<Seed> {
  const call = async (token: string | undefined, method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`Seeding the fuzz account: ${method} ${path} answered ${res.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as Json;
  };
  const register = async (label: string) => {
    const email = `fuzz-${label}-${hex()}@example.com`;
    const password = crypto.randomBytes(18).toString('base64url');
    const { accessToken } = await call(undefined, 'POST', '/api/auth/register', { email, password, name: `Fuzz ${label}` });
    return { email, password, token: accessToken as string };
  };
  const times = <T>(make: (i: number) => Promise<T>) => Promise.all(Array.from({ length: COPIES }, (_, i) => make(i)));

  const user = await register('user');
  log(`registered ${user.email}; creating ${COPIES} of each resource`);
  const as = (method: string, path: string, body?: unknown) => call(user.token, method, path, body);
  const idOf = async (method: string, path: string, body?: unknown) => (await as(method, path, body)).id as string;

  const agent = await times((i) => idOf('POST', '/api/agents', { name: `Fuzz agent ${i}`, status: 'active' }));
  // One child of each kind per agent, so that deleting one agent takes only one of each.
  const connector = await times((i) => idOf('POST', `/api/agents/${agent[i]}/connectors`, { type: 'telegram', name: `Fuzz connector ${i}`, configJson: { botToken: `123456:fuzz-bot-token-${i}` } }));
  const tool = await times((i) => idOf('POST', `/api/agents/${agent[i]}/tools`, { type: 'coin_prices', name: `Fuzz tool ${i}`, configJson: { coinIds: ['bitcoin'] } }));
  // Once a year: it never fires on its own during a run.
  const agentTrigger = await times((i) => idOf('POST', `/api/agents/${agent[i]}/triggers`, { type: 'cron', name: `Fuzz cron ${i}`, configJson: { cronExpression: '0 0 1 1 *' } }));
  const run = await times((i) => idOf('POST', `/api/agents/${agent[i]}/runs`, { input: { fuzz: i } }));
  // A closed local port: deliveries fail at once, so they can be retried (409 only while one is pending).
  const webhookBody = (i: number) => ({ name: `Fuzz webhook ${i}`, url: 'http://127.0.0.1:9/fuzz', events: ['webhook.test'] });
  const webhook = await times((i) => idOf('POST', '/api/webhooks', webhookBody(i)));
  const userTrigger = await times((i) => idOf('POST', '/api/user-triggers', { type: 'cron', name: `Fuzz user cron ${i}`, configJson: { cronExpression: '0 0 1 1 *' } }));
  const teamMember = await times((i) => idOf('POST', '/api/team', { email: `fuzz-member-${i}-${hex()}@example.com`, role: 'viewer' }));
  const apiKey = await times((i) => idOf('POST', '/api/auth/api-keys', { name: `Fuzz key ${i}` }));

  const fireAgentTrigger = await idOf('POST', `/api/agents/${agent[0]}/triggers`, { type: 'cron', name: 'Fuzz fired cron', configJson: { cronExpression: '0 0 1 1 *' } });
  const agentTriggerFire = (await as('POST', `/api/triggers/${fireAgentTrigger}/fire`, {})).fireId as string;
  const fireUserTrigger = await idOf('POST', '/api/user-triggers', { type: 'cron', name: 'Fuzz fired user cron', configJson: { cronExpression: '0 0 1 1 *' } });
  const userTriggerFire = (await as('POST', `/api/user-triggers/${fireUserTrigger}/fire`, {})).fireId as string;

  const other = await register('other');
  const invitation = (await call(other.token, 'POST', '/api/team', { email: user.email, role: 'viewer' })).id as string;
  const incomingWebhook = (await call(other.token, 'POST', '/api/webhooks', { name: 'Fuzz incoming webhook', direction: 'incoming' })).id as string;
  const triggerToken = crypto.randomBytes(24).toString('base64url');
  const hookTrigger = await call(other.token, 'POST', '/api/user-triggers', { type: 'webhook', name: 'Fuzz hook trigger', configJson: { secretToken: triggerToken } });
  const webhookPath = (hookTrigger.configJson as Json).webhookPath as string;

  // A delivery is made by the worker (the event's fan-out), shortly after the test event.
  const deliveryWebhook = await idOf('POST', '/api/webhooks', webhookBody(COPIES));
  await as('POST', `/api/webhooks/${deliveryWebhook}/test`, {});
  let delivery: string | undefined;
  for (const deadline = Date.now() + 60_000; !delivery; await sleep(500)) {
    const deliveries = (await as('GET', `/api/webhooks/${deliveryWebhook}/deliveries`)) as unknown as Json[];
    delivery = deliveries[0]?.id as string | undefined;
    if (!delivery && Date.now() > deadline) throw new Error('Seeding the fuzz account: the test event made no delivery within 60 s (is the worker running?)');
  }

  return {
    email: user.email,
    password: user.password,
    ids: {
      agent,
      connector,
      tool,
      webhook,
      deliveryWebhook: [deliveryWebhook],
      delivery: [delivery],
      agentTrigger,
      fireAgentTrigger: [fireAgentTrigger],
      agentTriggerFire: [agentTriggerFire],
      userTrigger,
      fireUserTrigger: [fireUserTrigger],
      userTriggerFire: [userTriggerFire],
      run,
      teamMember,
      invitation: [invitation],
      apiKey,
      incomingWebhook: [incomingWebhook],
      webhookPath: [webhookPath],
      triggerToken: [triggerToken],
    },
  };
}
