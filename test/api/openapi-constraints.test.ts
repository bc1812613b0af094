import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
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
});
