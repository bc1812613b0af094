import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

/** What a run with a language model reads from an agent and its tools is checked on write. */
describe('model settings on write', () => {
  const suite = suiteContext();
  let app: TestApp;
  let user: TestUser;
  let agentId: string;

  before(async () => {
    ({ app } = await startTestApp(suite));
    user = await registerUser(app);
    const res = await app.inject({ method: 'POST', url: '/api/agents', headers: user.auth, payload: { name: 'a', configJson: { model: 'gpt-4o-mini', temperature: 0.7, maxSteps: 12, other: { kept: true } } } });
    assert.equal(res.statusCode, 201, res.body);
    agentId = res.json().id;
    assert.deepEqual(res.json().configJson, { model: 'gpt-4o-mini', temperature: 0.7, maxSteps: 12, other: { kept: true } });
  });

  const agentWrites = (configJson: unknown) => [
    { method: 'POST' as const, url: '/api/agents', payload: { name: 'b', configJson } },
    { method: 'PATCH' as const, url: `/api/agents/${agentId}`, payload: { configJson } },
    { method: 'PUT' as const, url: `/api/agents/${agentId}`, payload: { configJson } },
  ];

  for (const [configJson, field] of [
    [{ temperature: 2.5 }, 'temperature'],
    [{ temperature: -0.1 }, 'temperature'],
    [{ temperature: '1' }, 'temperature'],
    [{ maxSteps: 0 }, 'maxSteps'],
    [{ maxSteps: 51 }, 'maxSteps'],
    [{ maxSteps: 2.5 }, 'maxSteps'],
    [{ model: '' }, 'model'],
    [{ model: 'x'.repeat(201) }, 'model'],
    [{ model: null }, 'model'],
  ] as const) {
    it(`refuses configJson ${JSON.stringify(configJson).slice(0, 40)} naming body.configJson.${field}`, async () => {
      for (const write of agentWrites(configJson)) {
        const res = await app.inject({ ...write, headers: user.auth });
        assert.equal(res.statusCode, 400, `${write.method} ${res.body}`);
        assert.match(res.json().message, new RegExp(`^body\\.configJson\\.${field}: `), res.body);
      }
    });
  }

  it('accepts the bounds', async () => {
    for (const configJson of [{ temperature: 0, maxSteps: 1 }, { temperature: 2, maxSteps: 50, model: 'llama3.1:8b' }]) {
      const res = await app.inject({ method: 'PATCH', url: `/api/agents/${agentId}`, headers: user.auth, payload: { configJson } });
      assert.equal(res.statusCode, 200, res.body);
    }
  });

  const customTool = (parameters: unknown) => ({ type: 'custom', name: 't', configJson: { endpoint: 'https://example.com/x', parameters } });

  it('takes a custom tool\'s parameters as a JSON Schema of an object', async () => {
    const parameters = { type: 'object', properties: { city: { type: 'string', pattern: '^[A-Z]' }, days: { type: 'integer', minimum: 1 } }, required: ['city'] };
    const res = await app.inject({ method: 'POST', url: `/api/agents/${agentId}/tools`, headers: user.auth, payload: customTool(parameters) });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().configJson.parameters, parameters);
    const patched = await app.inject({ method: 'PATCH', url: `/api/tools/${res.json().id}`, headers: user.auth, payload: { configJson: { parameters: { type: 'array' } } } });
    assert.equal(patched.statusCode, 400, 'checked on update too');
    assert.match(patched.json().message, /^body\.configJson\.parameters: must describe an object/);
  });

  for (const [parameters, reason] of [
    [{ type: 'objekt' }, /must describe an object/],
    [{ type: 'object', properties: { a: { type: 'strin' } } }, /is not a valid JSON Schema: schema is invalid: data\/properties\/a\/type/],
    [{ type: 'object', properties: { a: { type: 'string', pattern: '(a)\\1' } } }, /RE2 syntax/],
    [{ type: 'object', properties: { a: { $ref: 'https://example.com/schema.json' } } }, /can't resolve reference/],
    [{ type: 'object', required: 'a' }, /is not a valid JSON Schema/],
    ['{"type":"object"}', /expected record/i],
  ] as const) {
    it(`refuses parameters ${JSON.stringify(parameters).slice(0, 50)}`, async () => {
      const res = await app.inject({ method: 'POST', url: `/api/agents/${agentId}/tools`, headers: user.auth, payload: customTool(parameters) });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().message, /^body\.configJson\.parameters: /);
      assert.match(res.json().message, reason);
    });
  }
});
