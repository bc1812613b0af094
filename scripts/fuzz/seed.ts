import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What the fuzzer needs before it starts: a user to sign in as, and one of each resource, so that operations
 * with ids in their paths reach their handlers (a generated UUID names nothing: 404 before any logic runs).
 */

export interface Seed {
  email: string;
  password: string;
  /** Ids of resources that the operations on `{id}` paths use; keys are those of `PATH_RESOURCES` (config.ts). */
  ids: Record<SeedResource, string>;
}

export type SeedResource =
  | 'agent'
  | 'connector'
  | 'tool'
  | 'webhook'
  | 'incomingWebhook'
  | 'delivery'
  | 'agentTrigger'
  | 'agentTriggerFire'
  | 'userTrigger'
  | 'userTriggerFire'
  | 'webhookPath'
  | 'run'
  | 'teamMember'
  | 'invitation'
  | 'apiKey';

type Json = Record<string, unknown>;

export async function seed(baseUrl: string, log: (message: string) => void): Promise<Seed> {
  const call = async (token: string | undefined, method: string, path: string, body?: unknown, expect = [200, 201, 202]): Promise<Json> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!expect.includes(res.status)) throw new Error(`Seeding the fuzz account: ${method} ${path} answered ${res.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as Json;
  };
  const register = async (label: string) => {
    const email = `fuzz-${label}-${crypto.randomBytes(4).toString('hex')}@example.com`;
    const password = crypto.randomBytes(18).toString('base64url');
    const { accessToken } = await call(undefined, 'POST', '/api/auth/register', { email, password, name: `Fuzz ${label}` });
    return { email, password, token: accessToken as string };
  };

  const user = await register('user');
  log(`registered ${user.email}; creating one of each resource`);
  const as = (method: string, path: string, body?: unknown) => call(user.token, method, path, body);
  const idOf = async (method: string, path: string, body?: unknown) => (await as(method, path, body)).id as string;

  const agent = await idOf('POST', '/api/agents', { name: 'Fuzz agent', status: 'active' });
  const connector = await idOf('POST', `/api/agents/${agent}/connectors`, { type: 'telegram', name: 'Fuzz connector', configJson: { botToken: '123456:fuzz-bot-token' } });
  const tool = await idOf('POST', `/api/agents/${agent}/tools`, { type: 'coin_prices', name: 'Fuzz tool', configJson: { coinIds: ['bitcoin'] } });
  // A closed local port: its deliveries fail at once, so they can be retried (409 only while one is pending).
  const webhook = await idOf('POST', '/api/webhooks', { name: 'Fuzz webhook', url: 'http://127.0.0.1:9/fuzz', events: ['webhook.test'] });
  const incomingWebhook = await idOf('POST', '/api/webhooks', { name: 'Fuzz incoming webhook', direction: 'incoming' });
  // Once a year: it never fires on its own during a run.
  const agentTrigger = await idOf('POST', `/api/agents/${agent}/triggers`, { type: 'cron', name: 'Fuzz cron', configJson: { cronExpression: '0 0 1 1 *' } });
  const userTriggerBody = await as('POST', '/api/user-triggers', { type: 'webhook', name: 'Fuzz hook trigger', configJson: {} });
  const userTrigger = userTriggerBody.id as string;
  const webhookPath = (userTriggerBody.configJson as Json).webhookPath as string;
  const agentTriggerFire = (await as('POST', `/api/triggers/${agentTrigger}/fire`, {})).fireId as string;
  const userTriggerFire = (await as('POST', `/api/user-triggers/${userTrigger}/fire`, {})).fireId as string;
  const run = await idOf('POST', `/api/agents/${agent}/runs`, { input: { fuzz: true } });
  const apiKey = await idOf('POST', '/api/auth/api-keys', { name: 'Fuzz key' });
  const teamMember = await idOf('POST', '/api/team', { email: `fuzz-member-${crypto.randomBytes(4).toString('hex')}@example.com`, role: 'viewer' });

  // An invitation addressed to the fuzz user, from another account.
  const inviter = await register('inviter');
  const invitation = (await call(inviter.token, 'POST', '/api/team', { email: user.email, role: 'viewer' })).id as string;

  // A delivery is made by the worker (the event's fan-out), shortly after the test event.
  await as('POST', `/api/webhooks/${webhook}/test`, {});
  let delivery: string | undefined;
  for (const deadline = Date.now() + 60_000; !delivery; await sleep(500)) {
    const list = (await call(user.token, 'GET', `/api/webhooks/${webhook}/deliveries`)) as unknown as Json[];
    delivery = list[0]?.id as string | undefined;
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
      incomingWebhook,
      delivery,
      agentTrigger,
      agentTriggerFire,
      userTrigger,
      userTriggerFire,
      webhookPath,
      run,
      teamMember,
      invitation,
      apiKey,
    },
  };
}
