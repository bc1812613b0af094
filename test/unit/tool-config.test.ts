import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectorConfigSchemas } from '../../api/schemas/connectors';
import { toolConfigSchemas } from '../../api/schemas/tools';
import { CONNECTOR_SECRET_PATHS, toolSecretPaths } from '../../lib/secret-paths';

describe('custom tool secret headers', () => {
  it('treats every header as a secret but Content-Type, Accept, Accept-Language and User-Agent (any case)', () => {
    const headers = {
      Authorization: 'a', authorization2: 'a', 'X-API-KEY': 'k', 'X-Auth-Token': 't', 'Client-Secret': 's', 'Proxy-Authorization': 'p',
      Cookie: 'c', 'X-Auth': 'x', 'X-Session': 's', 'X-Request-Id': 'x', Keep: 'x',
      Accept: 'x', 'content-type': 'x', 'ACCEPT-LANGUAGE': 'x', 'User-Agent': 'x',
    };
    const paths = toolSecretPaths('custom', { endpoint: 'https://example.com', headers });
    assert.deepEqual(
      paths.map((p) => p[1]),
      ['Authorization', 'authorization2', 'X-API-KEY', 'X-Auth-Token', 'Client-Secret', 'Proxy-Authorization', 'Cookie', 'X-Auth', 'X-Session', 'X-Request-Id', 'Keep'],
    );
    for (const path of paths) assert.equal(path[0], 'headers');
  });

  it('finds none for other types or without headers', () => {
    assert.deepEqual(toolSecretPaths('coin_prices', { coinIds: ['x'], headers: { Authorization: 'a' } }), []);
    assert.deepEqual(toolSecretPaths('custom', { endpoint: 'https://example.com' }), []);
  });
});

describe('config schemas', () => {
  it('fill the documented defaults', () => {
    assert.deepEqual(toolConfigSchemas.dex_pairs.parse({ chainIds: ['1'] }), { chainIds: ['1'], pairAddresses: [] });
    assert.deepEqual(toolConfigSchemas.custom.parse({ endpoint: 'https://example.com/x' }), { endpoint: 'https://example.com/x', method: 'GET', headers: {} });
  });

  it('accept header names that are RFC 9110 tokens only', () => {
    const withHeader = (name: string) => toolConfigSchemas.custom.safeParse({ endpoint: 'https://example.com', headers: { [name]: 'v' } }).success;
    for (const ok of ['Accept', 'X-Custom_Header.v2', "a!#$%&'*+-.^_`|~z"]) assert.equal(withHeader(ok), true, ok);
    for (const bad of ['', 'Bad Name', 'Colon:', 'Ünicode', 'a\nb', '(x)']) assert.equal(withHeader(bad), false, JSON.stringify(bad));
  });

  it('declare a secret path for every connector secret field', () => {
    for (const [type, paths] of Object.entries(CONNECTOR_SECRET_PATHS)) {
      const shape = connectorConfigSchemas[type as keyof typeof connectorConfigSchemas].shape as Record<string, unknown>;
      for (const [field] of paths) assert.ok(field! in shape, `${type}.${field}`);
      assert.ok(paths.some(([f]) => f === 'botToken'), `${type} botToken`);
    }
    assert.deepEqual(CONNECTOR_SECRET_PATHS.slack, [['botToken'], ['signingSecret']]);
  });
});
