import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import Ajv2020 from 'ajv/dist/2020';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

type Schema = Record<string, unknown> & { $ref?: string; properties?: Record<string, Schema>; oneOf?: Schema[]; anyOf?: Schema[] };

/**
 * Where the document states a constraint, the API enforces that very constraint: a value the document allows is
 * accepted and one it refuses is refused. A fuzzer (npm run fuzz) generates values from the document; each case
 * here is one it found where the two disagreed.
 */
describe('OpenAPI document: stated constraints are the enforced ones', () => {
  const suite = suiteContext();
  let app: TestApp;
  let user: TestUser;
  let components: Record<string, Schema>;

  before(async () => {
    ({ app } = await startTestApp(suite));
    user = await registerUser(app);
    components = (await api(app).get('/api/openapi.json')).json().components.schemas;
  });

  const post = (url: string, payload: unknown) => api(app, user).post(url, payload);

  it('eventFilter: the documented key pattern and key count are what a write accepts', async () => {
    const filter = components.EventTriggerConfig!.properties!.eventFilter!;
    const names = filter.propertyNames as { pattern?: string; maxLength?: number } | undefined;
    assert.ok(names?.pattern, 'the document states which keys a filter may have');
    assert.equal(names.maxLength, 200);
    assert.equal(filter.maxProperties, 20);
    const documented = new RegExp(names.pattern);
    // "" is what the fuzzer sent: a key the document allowed and the API refused.
    for (const key of ['', 'a', 'payload.action', '$a', 'a.$b', 'a..b', '.a', 'a.', '-x_1', 'a$', 'é', 'a b']) {
      const res = await post('/api/user-triggers', { type: 'event', name: 'f', configJson: { eventType: 'webhook.received', eventFilter: { [key]: 1 } } });
      assert.equal(res.statusCode === 201, documented.test(key), `key ${JSON.stringify(key)}: ${res.statusCode} ${res.body}`);
    }
  });

  it('POST /api/webhooks: one documented variant per direction, each with what the API requires of it', async () => {
    const paths = (await api(app).get('/api/openapi.json')).json().paths;
    const body = paths['/api/webhooks'].post.requestBody.content['application/json'];
    const resolve = (schema: Schema) => (schema.$ref ? components[schema.$ref.split('/').pop()!]! : schema);
    const variants = (resolve(body.schema).anyOf ?? resolve(body.schema).oneOf ?? []).map(resolve);
    const byDirection = Object.fromEntries(variants.map((v) => [(v.properties!.direction as { const?: string }).const, v]));
    assert.deepEqual(Object.keys(byDirection).sort(), ['incoming', 'outgoing'], 'a variant per direction');
    // What the fuzzer sent: an outgoing create without url (the document said url was optional) …
    assert.ok((byDirection.outgoing!.required as string[]).includes('url'), 'an outgoing webhook needs its url');
    const noUrl = await post('/api/webhooks', { name: 'no target' });
    assert.equal(noUrl.statusCode, 400, noUrl.body);
    // … and an incoming one with "*" (the document allowed every type).
    const incomingEvents = byDirection.incoming!.properties!.events as { items: { enum: string[] } };
    assert.deepEqual(incomingEvents.items.enum, ['webhook.received']);
    for (const type of ['*', 'agent.completed', 'webhook.received']) {
      const res = await post('/api/webhooks', { name: 'in', direction: 'incoming', events: [type] });
      assert.equal(res.statusCode === 201, incomingEvents.items.enum.includes(type), `${type}: ${res.statusCode} ${res.body}`);
    }
    // Each variant's example creates a webhook of its direction.
    for (const [direction, example] of Object.entries(body.examples as Record<string, { value: object }>)) {
      const res = await post('/api/webhooks', example.value);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().direction, direction);
    }
  });

  it("a custom tool's parameters: the document states that they describe an object, and what it allows (and compiles) is accepted", async () => {
    // Found by schemathesis: `parameters` was documented as any object, and a schema-valid {} was refused.
    const documented = components.CustomToolConfig!.properties!.parameters!;
    const allows = new Ajv2020({ strict: false }).compile(documented);
    const agent = await api(app, user).ok('POST', '/api/agents', { name: 'with tools' });
    const create = (parameters: unknown) =>
      post(`/api/agents/${agent.id}/tools`, { type: 'custom', name: 'p', configJson: { endpoint: 'http://127.0.0.1:9/x', parameters } });
    for (const parameters of [{}, { properties: {} }, { type: 'string' }, { type: ['object'] }, { type: 'object' }, { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }]) {
      const res = await create(parameters);
      assert.equal(res.statusCode === 201, allows(parameters), `${JSON.stringify(parameters)}: ${res.statusCode} ${res.body}`);
      if (res.statusCode !== 201) assert.match(res.json().message, /^body\.configJson\.parameters: must describe an object/);
    }
    // What no JSON Schema keyword states, the description does, with the message a refusal carries.
    assert.match(String(documented.description), /does not compile as draft-07 .* is refused: 400 `…parameters: is not a valid JSON Schema: <why>`/);
    const notCompiling = { type: 'object', properties: { a: 5 } };
    assert.ok(allows(notCompiling), 'allowed by the document as a shape');
    const res = await create(notCompiling);
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().message, /^body\.configJson\.parameters: is not a valid JSON Schema: /);
  });
});
