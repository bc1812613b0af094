import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import Ajv2020 from 'ajv/dist/2020';
import type { Db } from '../../db/pool';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

interface Operation {
  summary?: string;
  description?: string;
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, { schema?: unknown; examples?: Record<string, { value: Record<string, unknown> }> }> };
  responses: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
  security?: unknown[];
}

/** Every route is documented with its request and response schemas (issue 3 §7). */
describe('OpenAPI document covers every route', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;
  let paths: Record<string, Record<string, Operation>>;
  let components: Record<string, Record<string, unknown>>;

  before(async () => {
    ({ app, db } = await startTestApp(suite));
    const doc = (await api(app).get('/api/openapi.json')).json();
    ({ paths } = doc);
    components = doc.components.schemas;
  });

  it('lists every resource route', () => {
    const expected: Record<string, string[]> = {
      '/api/agents/{agentId}/connectors': ['get', 'post'],
      '/api/connectors/{id}': ['get', 'put', 'patch', 'delete'],
      '/api/agents/{agentId}/tools': ['get', 'post'],
      '/api/tools/{id}': ['get', 'put', 'patch', 'delete'],
      '/api/webhooks': ['get', 'post'],
      '/api/webhooks/{id}': ['get', 'put', 'patch', 'delete'],
      '/api/agents/{agentId}/triggers': ['get', 'post'],
      '/api/triggers/{id}': ['get', 'put', 'patch', 'delete'],
      '/api/user-triggers': ['get', 'post'],
      '/api/user-triggers/{id}': ['get', 'put', 'patch', 'delete'],
      '/api/team': ['get', 'post'],
      '/api/team/{id}': ['get', 'put', 'patch', 'delete'],
      '/api/invitations': ['get'],
      '/api/invitations/{id}/accept': ['post'],
      // Workspaces.
      '/api/accounts': ['get'],
      '/api/account/audit': ['get'],
      '/api/agents/{id}/export': ['get'],
      '/api/agents/import': ['post'],
      // The engine (issue 4).
      '/api/triggers/{id}/fires': ['get'],
      '/api/triggers/{id}/fires/{fireId}': ['get'],
      '/api/triggers/{id}/fire': ['post'],
      '/api/user-triggers/{id}/fires': ['get'],
      '/api/user-triggers/{id}/fires/{fireId}': ['get'],
      '/api/user-triggers/{id}/fire': ['post'],
      '/api/webhooks/{id}/deliveries': ['get'],
      '/api/webhooks/{id}/deliveries/{deliveryId}/retry': ['post'],
      '/api/webhooks/{id}/test': ['post'],
      '/api/webhooks/{id}/recover': ['post'],
      '/api/webhooks/{id}/recoveries/{recoveryId}': ['get'],
      '/api/hooks/webhooks/{id}': ['post'],
      '/api/hooks/triggers/{webhookPath}': ['post'],
      '/api/agents/{id}/runs': ['get', 'post'],
      '/api/runs/{id}': ['get'],
      '/api/runs/{id}/steps': ['get'],
      // Operating it (issue 14).
      '/metrics': ['get'],
      '/api/triggers/{id}/expected-fires': ['get'],
      '/api/triggers/{id}/preview': ['get'],
      '/api/user-triggers/{id}/expected-fires': ['get'],
      '/api/user-triggers/{id}/preview': ['get'],
      '/api/webhooks/{id}/stats': ['get'],
      // Agents that think (issue 13).
      '/api/agents/{id}/threads/{threadId}/messages': ['get'],
      '/api/runs/{id}/events': ['get'],
      // The console (docs/console.md).
      '/api/runs': ['get'],
      '/api/settings': ['get'],
    };
    for (const [path, methods] of Object.entries(expected)) {
      for (const method of methods) assert.ok(paths[path]?.[method], `${method.toUpperCase()} ${path} is not documented`);
    }
  });

  it('gives each operation its parameters, body and response schemas', () => {
    const bodiless = new Set(['post /api/webhooks/{id}/deliveries/{deliveryId}/retry', 'post /api/runs/{id}/cancel']);
    let count = 0;
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const name = `${method} ${path}`;
        count++;
        for (const [, param] of path.matchAll(/\{(\w+)\}/g)) {
          assert.ok(op.parameters?.some((p) => p.in === 'path' && p.name === param), `${name}: path parameter ${param} undocumented`);
        }
        if (['post', 'put', 'patch'].includes(method) && !bodiless.has(name) && !path.startsWith('/api/auth/logout')) {
          assert.ok(op.requestBody?.content['application/json']?.schema, `${name}: no request body schema`);
        }
        const success = Object.entries(op.responses).filter(([status]) => status.startsWith('2'));
        assert.ok(success.length > 0, `${name}: no success response`);
        // The live run events are a text/event-stream, /metrics Prometheus's text/plain; every other success is JSON.
        const media = name === 'get /api/runs/{id}/events' ? 'text/event-stream' : path === '/metrics' ? 'text/plain' : 'application/json';
        for (const [status, response] of success) {
          if (status !== '204') assert.ok(response.content?.[media]?.schema, `${name}: ${status} has no ${media} schema`);
        }
        const isPublic = Array.isArray(op.security) && op.security.length === 0;
        if (!isPublic && !path.startsWith('/api/health') && !/^\/api\/auth\/(register|login|refresh|logout)$/.test(path)) {
          assert.ok(op.responses['401'], `${name}: 401 undocumented`);
        }
        if (path.includes('{id}') || path.includes('{agentId}')) assert.ok(op.responses['404'], `${name}: 404 undocumented`);
        if (['post', 'put', 'patch'].includes(method) && !bodiless.has(name)) assert.ok(op.responses['400'], `${name}: 400 undocumented`);
      }
    }
    assert.ok(count >= 40, `only ${count} operations`);
  });

  it('documents a run step with the fields of docs/api.md § Agent runs "Steps"', async () => {
    const ok = paths['/api/runs/{id}/steps']!.get!.responses['200']!.content!['application/json']!.schema as { items: { $ref?: string } };
    const doc = (await api(app).get('/api/openapi.json')).json();
    const schemas = doc.components.schemas as Record<string, { properties: Record<string, unknown> }>;
    const step = schemas[ok.items.$ref!.split('/').pop()!]!;
    for (const field of ['index', 'type', 'name', 'input', 'output', 'error', 'usage', 'startedAt', 'finishedAt']) {
      assert.ok(step.properties[field], `RunStep.${field} undocumented`);
    }
  });

  it('documents the live run stream as its events (event, id, data: a RunStep or the Run as JSON), which a stream answers', async () => {
    // Found by schemathesis: the stream was documented as one string, and each event it read failed that schema.
    const media = paths['/api/runs/{id}/events']!.get!.responses['200']!.content!['text/event-stream']!;
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    // The schema of a text/event-stream response describes each event; its data's contentSchema what the JSON holds.
    ajv.addSchema({ $id: 'doc', components: { schemas: components }, event: media.schema });
    const eventValid = ajv.getSchema('doc#/event')!;

    const user = await registerUser(app);
    const agent = await api(app, user).ok('POST', '/api/agents', { name: 'streamed' });
    const run = await api(app, user).ok('POST', `/api/agents/${agent.id}/runs`, { input: 'hi' });
    // The run as a worker leaves it: two steps finished, then the run.
    for (const index of [0, 1]) {
      await db.query(
        `INSERT INTO run_steps (run_id, step_index, type, name, output, started_at, finished_at) VALUES ($1, $2, 'tool', $3, '{"ok": true}', now(), now())`,
        [run.id, index, `tool ${index}`],
      );
    }
    await db.query(`UPDATE runs SET status = 'succeeded', executor = 'tools', started_at = now(), finished_at = now(), output = '{}' WHERE id = $1`, [run.id]);

    const res = await api(app, user).get(`/api/runs/${run.id}/events`);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    // Read as an EventSource reads it (WHATWG: blank line ends an event; an id lasts until another is set).
    const events: Array<Record<string, string>> = [];
    let lastId: string | undefined;
    for (const block of res.body.split('\n\n')) {
      const event: Record<string, string> = {};
      const data: string[] = [];
      for (const line of block.split('\n').filter((l) => l && !l.startsWith(':'))) {
        const [field, ...rest] = line.split(':');
        const value = rest.join(':').replace(/^ /, '');
        if (field === 'data') data.push(value);
        else if (field === 'id') lastId = value;
        else if (field === 'event') event.event = value;
      }
      if (data.length) events.push({ event: event.event ?? 'message', data: data.join('\n'), ...(lastId === undefined ? {} : { id: lastId }) });
    }
    assert.deepEqual(events.map((e) => `${e.event}:${e.id}`), ['step:0', 'step:1', 'done:1']);
    for (const event of events) {
      assert.ok(eventValid(event), `${event.event} event: ${ajv.errorsText(eventValid.errors)}`);
      const documented = (media.schema as { $ref?: string }).$ref!.split('/').pop()!;
      const variant = (components[documented]!.oneOf as Array<{ properties: { event: { const: string }; data: { contentSchema: { $ref: string } } } }>)
        .find((v) => v.properties.event.const === event.event)!;
      const dataValid = ajv.compile({ $ref: `doc${variant.properties.data.contentSchema.$ref}` });
      assert.ok(dataValid(JSON.parse(event.data!)), `${event.event} data: ${ajv.errorsText(dataValid.errors)}`);
    }
    assert.equal(JSON.parse(events[2]!.data!).status, 'succeeded');
  });

  it('gives each operation a summary, a description and every status it can answer, each described', () => {
    // /metrics asks for no user credential (with METRICS_TOKEN, its own bearer token; its 401 is its own).
    const publicPaths = /^(\/api\/(health(\/db|\/temporal|\/ready)?|auth\/(register|login|refresh|logout)|hooks\/.*)|\/metrics)$/;
    const rateLimited = /^\/api\/(auth\/(register|login|refresh|logout)|hooks\/.*)$/;
    const problems: string[] = [];
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const name = `${method.toUpperCase()} ${path}`;
        const isPublic = Array.isArray(op.security) && op.security.length === 0;
        // Account-Id is never a 400: an account the caller may not act in, malformed or not, is a 404.
        const query = op.parameters?.some((p) => p.in === 'query' || (p.in === 'header' && p.name !== 'account-id'));
        const carriesBody = ['post', 'put', 'patch', 'delete'].includes(method);
        const expected = new Set<string>();
        if (carriesBody) ['400', '413', '415'].forEach((s) => expected.add(s));
        if (query) expected.add('400');
        if (!isPublic) expected.add('401');
        if (/\{\w+\}/.test(path)) expected.add('404');
        if (method === 'post' && !isPublic) ['409', '422'].forEach((s) => expected.add(s));
        if (rateLimited.test(path)) expected.add('429');

        if (!op.summary?.trim()) problems.push(`${name}: no summary`);
        if (!op.description?.trim()) problems.push(`${name}: no description`);
        if (isPublic !== publicPaths.test(path)) problems.push(`${name}: ${isPublic ? 'public' : 'requires a credential'}, unexpectedly`);
        for (const status of expected) if (!op.responses[status]) problems.push(`${name}: ${status} undocumented`);
        if (method === 'post' && !isPublic && !op.parameters?.some((p) => p.in === 'header' && p.name === 'idempotency-key')) {
          problems.push(`${name}: Idempotency-Key undocumented`);
        }
        if (!isPublic && !op.parameters?.some((p) => p.in === 'header' && p.name === 'account-id')) problems.push(`${name}: Account-Id undocumented`);
        if (!isPublic && !/Account-Id/.test(op.responses['404']?.description ?? '')) problems.push(`${name}: the Account-Id 404 undocumented`);
        for (const [status, response] of Object.entries(op.responses)) {
          if (!response.description || response.description === 'Default Response') problems.push(`${name}: ${status} has no description`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('calls the server the document was loaded from (a relative servers entry)', async () => {
    const doc = (await api(app).get('/api/openapi.json')).json();
    assert.deepEqual(doc.servers.map((s: { url: string }) => s.url), ['/']);
    const page = await api(app).get('/api/docs/static/index.html');
    assert.match(page.headers['content-security-policy'] as string, /connect-src 'self'(;|$)/);
  });

  /** The request body's variants (oneOf / anyOf, through $refs) with their `type` and example. */
  function variantsOf(op: Operation) {
    const schemas = components;
    const resolve = (s: Record<string, unknown>): Record<string, unknown> =>
      typeof s.$ref === 'string' ? schemas[s.$ref.replace('#/components/schemas/', '')]! : s;
    const walk = (s: Record<string, unknown>): Record<string, unknown>[] => {
      const r = resolve(s);
      const options = (r.oneOf ?? r.anyOf) as Record<string, unknown>[] | undefined;
      return options ? options.flatMap(walk) : [r];
    };
    return walk(op.requestBody!.content['application/json']!.schema as Record<string, unknown>).map((v) => ({
      type: ((v.properties as Record<string, { const?: string }>).type?.const) ?? null,
      config: (v.properties as Record<string, Record<string, unknown>>).configJson,
      examples: v.examples as Record<string, unknown>[] | undefined,
    }));
  }

  it('documents configJson per type, on create and on update, as a union on type with an example each', () => {
    const TYPES = {
      triggers: ['schedule', 'cron', 'webhook', 'event', 'agent_finished', 'agent_output'],
      tools: ['dex_pairs', 'prediction_markets', 'coin_prices', 'custom', 'mcp'],
      connectors: ['discord', 'slack', 'telegram'],
    };
    const bodies = [
      ['post', '/api/agents/{agentId}/triggers', TYPES.triggers, false], ['post', '/api/user-triggers', TYPES.triggers, false],
      ['patch', '/api/triggers/{id}', TYPES.triggers, true], ['put', '/api/user-triggers/{id}', TYPES.triggers, true],
      ['post', '/api/agents/{agentId}/tools', TYPES.tools, false], ['patch', '/api/tools/{id}', TYPES.tools, true],
      ['post', '/api/agents/{agentId}/connectors', TYPES.connectors, false], ['put', '/api/connectors/{id}', TYPES.connectors, true],
    ] as const;
    for (const [method, path, types, isUpdate] of bodies) {
      const variants = variantsOf(paths[path]![method]!);
      const where = `${method.toUpperCase()} ${path}`;
      assert.deepEqual(variants.map((v) => v.type), isUpdate ? [...types, null] : [...types], where);
      for (const variant of variants) {
        assert.equal(variant.examples?.length, 1, `${where} ${variant.type}: one example`);
        const config = variant.config?.$ref ? components[String(variant.config.$ref).split('/').pop()!] : variant.config;
        // A real schema per type: its fields, never a free-form object.
        if (variant.type) assert.ok(config?.properties && config.additionalProperties === false, `${where} ${variant.type}: configJson is free-form`);
      }
      const named = paths[path]![method]!.requestBody!.content['application/json']!.examples!;
      assert.deepEqual(Object.keys(named), variants.map((v) => v.type ?? 'same type'), `${where}: Swagger UI's examples`);
    }
  });

  it('has examples that the API accepts: each creates its type, each update applies to one of that type', async () => {
    const user = await registerUser(app);
    const call = async (method: 'POST' | 'PATCH' | 'PUT', url: string, payload: Record<string, unknown>, status: number) => {
      const res = await api(app, user).request(method, url, payload);
      assert.equal(res.statusCode, status, `${method} ${url} ${JSON.stringify(payload)}: ${res.body}`);
      return res.json();
    };
    const agent = (await call('POST', '/api/agents', { name: 'Examples', status: 'template' }, 201)).id;
    const resources = [
      ['/api/agents/{agentId}/triggers', '/api/triggers/{id}'], ['/api/user-triggers', '/api/user-triggers/{id}'],
      ['/api/agents/{agentId}/tools', '/api/tools/{id}'], ['/api/agents/{agentId}/connectors', '/api/connectors/{id}'],
    ] as const;
    let checked = 0;
    for (const [list, item] of resources) {
      const created = new Map<string, string>();
      for (const { type, examples } of variantsOf(paths[list]!.post!)) {
        const body = await call('POST', list.replace('{agentId}', agent), examples![0]!, 201);
        assert.equal(body.type, type);
        created.set(type!, body.id);
      }
      for (const method of ['patch', 'put'] as const) {
        for (const { type, examples } of variantsOf(paths[item]![method]!)) {
          // The example without a type patches whichever type the resource has: the first one created.
          const id = created.get(type ?? [...created.keys()][0]!)!;
          const body = await call(method.toUpperCase() as 'PATCH', item.replace('{id}', id), examples![0]!, 200);
          if (type) assert.equal(body.type, type);
          checked++;
        }
      }
    }
    assert.equal(checked, 2 * (7 + 7 + 6 + 4));
  });
});
