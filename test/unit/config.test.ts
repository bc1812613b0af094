import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../lib/config';

const valid = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
  TEMPORAL_ADDRESS: '127.0.0.1:7233',
  JWT_SECRET: 'x'.repeat(32),
  SECRETS_KEY: Buffer.alloc(32).toString('base64'),
};

describe('config', () => {
  it('applies the DESIGN defaults', () => {
    const c = loadConfig(valid);
    assert.equal(c.temporal.namespace, 'default');
    assert.equal(c.http.port, 3000);
    assert.equal(c.http.host, '127.0.0.1');
    assert.equal(c.http.publicBaseUrl, 'http://localhost:3000');
    assert.equal(c.billing.initialBalance, 1000);
    assert.equal(c.billing.agentCreateCost, 100);
    assert.equal(c.auth.rateLimitMax, 10);
    assert.equal(c.auth.rateLimitWindowMs, 900_000);
    assert.equal(c.http.trustProxy, false);
    assert.deepEqual(c.webhooks.retrySchedule, ['0s', '5s', '5m', '30m', '2h', '5h', '10h', '10h']);
    assert.equal(c.webhooks.timeoutMs, 15_000);
    assert.equal(c.webhooks.allowPrivateTargets, false);
    assert.deepEqual(c.quotas, { triggersPerAccount: 500, webhooksPerAccount: 100, toolsPerAgent: 50, connectorsPerAgent: 20 });
    assert.equal(c.hooks.rateLimitPerSecond, 50);
  });

  it('names every bad or missing variable', () => {
    assert.throws(
      () => loadConfig({ ...valid, PORT: 'eighty', SECRETS_KEY: 'short', JWT_SECRET: undefined, TRUST_PROXY: 'maybe' }),
      (err: Error) => {
        assert.ok(err instanceof ConfigError);
        for (const name of ['PORT', 'SECRETS_KEY', 'JWT_SECRET: is required', 'TRUST_PROXY']) assert.match(err.message, new RegExp(name));
        return true;
      },
    );
    assert.throws(() => loadConfig({ ...valid, DATABASE_URL: 'mysql://x' }), /DATABASE_URL/);
    assert.throws(() => loadConfig({ ...valid, WEBHOOK_RETRY_SCHEDULE: '5s,soon' }), /WEBHOOK_RETRY_SCHEDULE/);
    assert.throws(() => loadConfig({ ...valid, TEMPORAL_ADDRESS: 'localhost' }), /TEMPORAL_ADDRESS/);
    assert.throws(() => loadConfig({ ...valid, QUOTA_WEBHOOKS: '-1', HOOK_RATE_LIMIT: '0' }), /QUOTA_WEBHOOKS[\s\S]*HOOK_RATE_LIMIT/);
  });

  it('parses overrides', () => {
    const c = loadConfig({ ...valid, TRUST_PROXY: 'true', INITIAL_BALANCE: '5', PUBLIC_BASE_URL: 'https://api.example.com/' });
    assert.equal(c.http.trustProxy, true);
    assert.equal(c.billing.initialBalance, 5);
    assert.equal(c.http.publicBaseUrl, 'https://api.example.com');
  });
});
