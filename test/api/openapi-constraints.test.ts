import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';

type Schema = Record<string, unknown> & { $ref?: string; properties?: Record<string, Schema>; oneOf?: Schema[]; anyOf?: Schema[] };

/**
 * Where the document states a constraint, the API enforces that very constraint: a value the document allows is
 * accepted and one it refuses is refused. A fuzzer (npm run fuzz) generates values from the document; each case
 * here is one it found where the two disagreed.
 */
describe('OpenAPI document: stated constraints are the enforced ones', () => {
  let app: TestApp;
  let close: () => Promise<void>;
  let user: TestUser;
  let components: Record<string, Schema>;

  before(async () => {
    ({ app, close } = await startTestApp());
    user = await registerUser(app);
    components = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json().components.schemas;
  });
  after(() => close());

  const post = (url: string, payload: unknown) => app.inject({ method: 'POST', url, headers: user.auth, payload: payload as object });

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
});
