import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app';

interface Operation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, { schema?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  security?: unknown[];
}

/** Every route is documented with its request and response schemas (issue 3 §7). */
describe('OpenAPI document covers every route', () => {
  let app: TestApp;
  let close: () => Promise<void>;
  let paths: Record<string, Record<string, Operation>>;

  before(async () => {
    ({ app, close } = await startTestApp());
    paths = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json().paths;
  });
  after(() => close());

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
      // The engine (issue 4).
      '/api/triggers/{id}/fires': ['get'],
      '/api/triggers/{id}/fire': ['post'],
      '/api/user-triggers/{id}/fires': ['get'],
      '/api/user-triggers/{id}/fire': ['post'],
      '/api/webhooks/{id}/deliveries': ['get'],
      '/api/webhooks/{id}/deliveries/{deliveryId}/retry': ['post'],
      '/api/webhooks/{id}/test': ['post'],
      '/api/hooks/webhooks/{id}': ['post'],
      '/api/hooks/triggers/{webhookPath}': ['post'],
      '/api/agents/{id}/runs': ['get', 'post'],
      '/api/runs/{id}': ['get'],
      '/api/runs/{id}/steps': ['get'],
    };
    for (const [path, methods] of Object.entries(expected)) {
      for (const method of methods) assert.ok(paths[path]?.[method], `${method.toUpperCase()} ${path} is not documented`);
    }
  });

  it('gives each operation its parameters, body and response schemas', () => {
    const bodiless = new Set(['post /api/invitations/{id}/accept', 'post /api/webhooks/{id}/deliveries/{deliveryId}/retry']);
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
        for (const [status, response] of success) {
          if (status !== '204') assert.ok(response.content?.['application/json']?.schema, `${name}: ${status} has no schema`);
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

  it('documents a run step with the fields of DESIGN §9', async () => {
    const ok = paths['/api/runs/{id}/steps']!.get!.responses['200']!.content!['application/json']!.schema as { items: { $ref?: string } };
    const doc = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const schemas = doc.components.schemas as Record<string, { properties: Record<string, unknown> }>;
    const step = schemas[ok.items.$ref!.split('/').pop()!]!;
    for (const field of ['index', 'type', 'name', 'input', 'output', 'error', 'usage', 'startedAt', 'finishedAt']) {
      assert.ok(step.properties[field], `RunStep.${field} undocumented`);
    }
  });
});
