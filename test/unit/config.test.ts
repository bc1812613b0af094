import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, configVariables, loadConfig, metricsTokenProblem } from '../../lib/config';

const valid = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
  TEMPORAL_ADDRESS: '127.0.0.1:7233',
  JWT_SECRET: 'x'.repeat(32),
  SECRETS_KEY: Buffer.alloc(32).toString('base64'),
};

describe('config', () => {
  it('applies the documented defaults', () => {
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
    assert.deepEqual(c.webhooks.retryDelaysMs, [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    assert.equal(c.webhooks.timeoutMs, 15_000);
    assert.equal(c.webhooks.allowPrivateTargets, false);
    assert.equal(c.webhooks.concurrencyPerWebhook, 10);
    assert.equal(c.webhooks.workerSlots, 100);
    assert.deepEqual(c.fires, { chainBudget: 100, perMinute: 600 });
    assert.deepEqual(c.quotas, { triggersPerAccount: 500, webhooksPerAccount: 100, toolsPerAgent: 50, connectorsPerAgent: 20 });
    assert.equal(c.hooks.rateLimitPerSecond, 50);
    assert.deepEqual(c.runs, { concurrencyPerAccount: 10, timeoutMs: 300_000, backlogPerSecond: 5 });
  });

  it('serves /metrics unless METRICS_ENABLED=false, open unless METRICS_TOKEN (≥ 16 characters) is set', () => {
    assert.deepEqual(loadConfig(valid).metrics, { enabled: true, token: null, snapshotMs: 5_000 });
    assert.deepEqual(loadConfig({ ...valid, METRICS_ENABLED: 'false', METRICS_TOKEN: 't'.repeat(16) }).metrics, { enabled: false, token: 't'.repeat(16), snapshotMs: 5_000 });
    assert.equal(loadConfig({ ...valid, METRICS_SNAPSHOT_MS: '100' }).metrics.snapshotMs, 100);
    for (const bad of ['99', '5001', 'often']) assert.throws(() => loadConfig({ ...valid, METRICS_SNAPSHOT_MS: bad }), /METRICS_SNAPSHOT_MS/, bad);
    assert.throws(() => loadConfig({ ...valid, METRICS_TOKEN: 'short' }), /METRICS_TOKEN: must be at least 16 characters/);
    assert.throws(() => loadConfig({ ...valid, METRICS_ENABLED: 'maybe' }), /METRICS_ENABLED/);
  });

  it('asks for METRICS_TOKEN when the API listens on a HOST that is not loopback (and serves /metrics)', () => {
    for (const host of ['127.0.0.1', '127.0.0.53', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) {
      assert.equal(metricsTokenProblem(loadConfig({ ...valid, HOST: host })), null, host);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.7', 'api.example.com', '127.1', 'localhost.example.com']) {
      assert.match(metricsTokenProblem(loadConfig({ ...valid, HOST: host })) ?? '', /^METRICS_TOKEN is required when HOST \(.+\) is not a loopback address/, host);
      assert.equal(metricsTokenProblem(loadConfig({ ...valid, HOST: host, METRICS_TOKEN: 't'.repeat(16) })), null, `${host} with a token`);
      assert.equal(metricsTokenProblem(loadConfig({ ...valid, HOST: host, METRICS_ENABLED: 'false' })), null, `${host} without /metrics`);
    }
    assert.doesNotMatch(metricsTokenProblem(loadConfig({ ...valid, HOST: '0.0.0.0' }))!, /\n/, 'one line');
  });

  it('limits recoveries to one per RECOVER_INTERVAL (1m, at most 1d) and manual retries to DELIVERY_RETRIES_PER_MINUTE (60) per webhook', () => {
    assert.deepEqual(loadConfig(valid).webhooks.recoverInterval, { text: '1m', ms: 60_000 });
    assert.equal(loadConfig(valid).webhooks.retriesPerMinute, 60);
    assert.deepEqual(loadConfig({ ...valid, RECOVER_INTERVAL: '30s' }).webhooks.recoverInterval, { text: '30s', ms: 30_000 });
    assert.equal(loadConfig({ ...valid, DELIVERY_RETRIES_PER_MINUTE: '5' }).webhooks.retriesPerMinute, 5);
    for (const bad of ['0s', '2d', 'soon']) assert.throws(() => loadConfig({ ...valid, RECOVER_INTERVAL: bad }), /RECOVER_INTERVAL/, bad);
    for (const bad of ['0', '1.5', 'many']) assert.throws(() => loadConfig({ ...valid, DELIVERY_RETRIES_PER_MINUTE: bad }), /DELIVERY_RETRIES_PER_MINUTE/, bad);
  });

  it('bounds live run streams: RUN_STREAMS_PER_USER (10), RUN_STREAMS_PER_ACCOUNT (50), RUN_STREAMS_PER_PROCESS (2000), checked every RUN_STREAMS_CHECK_MS (10 s, at most 30 s)', () => {
    assert.deepEqual(loadConfig(valid).runEvents, { heartbeatMs: 15_000, perUser: 10, perAccount: 50, perProcess: 2000, checkMs: 10_000 });
    assert.deepEqual(
      loadConfig({ ...valid, RUN_STREAMS_PER_USER: '3', RUN_STREAMS_PER_ACCOUNT: '4', RUN_STREAMS_PER_PROCESS: '50', RUN_STREAMS_CHECK_MS: '200' }).runEvents,
      { heartbeatMs: 15_000, perUser: 3, perAccount: 4, perProcess: 50, checkMs: 200 },
    );
    for (const [name, bad] of [['RUN_STREAMS_PER_USER', '0'], ['RUN_STREAMS_PER_ACCOUNT', '0'], ['RUN_STREAMS_PER_PROCESS', '0'], ['RUN_STREAMS_CHECK_MS', '30001'], ['RUN_STREAMS_CHECK_MS', '99']]) {
      assert.throws(() => loadConfig({ ...valid, [name!]: bad! }), new RegExp(name!), `${name}=${bad}`);
    }
  });

  it('counts a schedule time as missed MISSED_FIRE_GRACE_MS (60 s) after its catch-up window', () => {
    assert.equal(loadConfig(valid).missedFires.graceMs, 60_000);
    assert.equal(loadConfig({ ...valid, MISSED_FIRE_GRACE_MS: '5000' }).missedFires.graceMs, 5_000);
    for (const bad of ['999', 'soon']) assert.throws(() => loadConfig({ ...valid, MISSED_FIRE_GRACE_MS: bad }), /MISSED_FIRE_GRACE_MS/);
  });

  it('bounds model use: MODEL_TOKENS_PER_DAY, MODEL_ALLOWED (MODEL_NAME among them), MODEL_CONTEXT_MAX_BYTES', () => {
    const m = loadConfig(valid).model;
    assert.deepEqual({ tokensPerDay: m.tokensPerDay, allowed: m.allowed, contextMaxBytes: m.contextMaxBytes }, { tokensPerDay: 2_000_000, allowed: null, contextMaxBytes: 262_144 });
    const set = loadConfig({ ...valid, MODEL_TOKENS_PER_DAY: '5000', MODEL_ALLOWED: ' gpt-4o-mini, llama3.1 ,', MODEL_NAME: 'llama3.1', MODEL_CONTEXT_MAX_BYTES: '65536' }).model;
    assert.deepEqual({ tokensPerDay: set.tokensPerDay, allowed: set.allowed, contextMaxBytes: set.contextMaxBytes }, { tokensPerDay: 5000, allowed: ['gpt-4o-mini', 'llama3.1'], contextMaxBytes: 65_536 });
    assert.throws(() => loadConfig({ ...valid, MODEL_ALLOWED: 'gpt-4o-mini', MODEL_NAME: 'llama3.1' }), /MODEL_NAME: llama3\.1 is not among MODEL_ALLOWED \(gpt-4o-mini\)/);
    assert.throws(() => loadConfig({ ...valid, MODEL_ALLOWED: ' , ' }), /MODEL_ALLOWED: must name at least one model/);
    for (const bad of ['0', 'lots']) assert.throws(() => loadConfig({ ...valid, MODEL_TOKENS_PER_DAY: bad }), /MODEL_TOKENS_PER_DAY/);
    assert.throws(() => loadConfig({ ...valid, MODEL_CONTEXT_MAX_BYTES: '100' }), /MODEL_CONTEXT_MAX_BYTES/);
  });

  it('keeps 30 days of history unless RETENTION_DAYS says otherwise (at least 1)', () => {
    assert.equal(loadConfig(valid).retention.days, 30);
    assert.equal(loadConfig({ ...valid, RETENTION_DAYS: '7' }).retention.days, 7);
    for (const bad of ['0', '1.5', 'month']) assert.throws(() => loadConfig({ ...valid, RETENTION_DAYS: bad }), /RETENTION_DAYS/);
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
    for (const name of ['CHAIN_FIRE_BUDGET', 'FIRES_PER_MINUTE', 'DELIVERY_CONCURRENCY_PER_WEBHOOK', 'DELIVERY_WORKER_SLOTS']) {
      assert.throws(() => loadConfig({ ...valid, [name]: '0' }), new RegExp(name), `${name}=0`);
      assert.throws(() => loadConfig({ ...valid, [name]: 'many' }), new RegExp(name), `${name}=many`);
    }
    assert.throws(() => loadConfig({ ...valid, QUOTA_WEBHOOKS: '-1', HOOK_RATE_LIMIT: '0' }), /QUOTA_WEBHOOKS[\s\S]*HOOK_RATE_LIMIT/);
    assert.throws(() => loadConfig({ ...valid, RUN_CONCURRENCY_PER_ACCOUNT: '0' }), /RUN_CONCURRENCY_PER_ACCOUNT/);
    assert.throws(() => loadConfig({ ...valid, RUN_TIMEOUT_MS: '5m' }), /RUN_TIMEOUT_MS/);
    assert.throws(() => loadConfig({ ...valid, RUN_BACKLOG_PER_SECOND: '-1' }), /RUN_BACKLOG_PER_SECOND/);
    for (const bad of ['1', '1001', 'few']) assert.throws(() => loadConfig({ ...valid, WORKER_WORKFLOW_TASK_SLOTS: bad }), /WORKER_WORKFLOW_TASK_SLOTS/, bad);
    assert.equal(loadConfig(valid).engine.workflowTaskSlots, 40);
    assert.equal(loadConfig({ ...valid, WORKER_WORKFLOW_TASK_SLOTS: '4' }).engine.workflowTaskSlots, 4);
    for (const bad of ['5 days', '0s', '30m1h', '-1d']) assert.throws(() => loadConfig({ ...valid, WEBHOOK_DISABLE_AFTER: bad }), /WEBHOOK_DISABLE_AFTER/, bad);
    assert.deepEqual(loadConfig(valid).webhooks.disableAfter, { text: '5d', ms: 5 * 86_400_000 });
    assert.deepEqual(loadConfig({ ...valid, WEBHOOK_DISABLE_AFTER: '1h30m' }).webhooks.disableAfter, { text: '1h30m', ms: 5_400_000 });
    for (const bad of ['a week', '0s', '366d', '1d7d']) assert.throws(() => loadConfig({ ...valid, INVITATION_TTL: bad }), /INVITATION_TTL/, bad);
    assert.deepEqual(loadConfig(valid).team.invitationTtl, { text: '7d', ms: 7 * 86_400_000 });
    assert.deepEqual(loadConfig({ ...valid, INVITATION_TTL: '36h' }).team.invitationTtl, { text: '36h', ms: 36 * 3_600_000 });
  });

  it('has no model provider unless MODEL_BASE_URL is set, and never prints MODEL_API_KEY', () => {
    const c = loadConfig(valid);
    assert.deepEqual(c.model, {
      api: 'chat',
      baseUrl: null,
      apiKey: null,
      name: null,
      timeoutMs: 120_000,
      maxRetries: 3,
      tokensPerDay: 2_000_000,
      allowed: null,
      contextMaxBytes: 262_144,
    });
    assert.equal(c.runEvents.heartbeatMs, 15_000);
    const set = loadConfig({
      ...valid,
      MODEL_BASE_URL: 'http://localhost:11434/v1/',
      MODEL_API_KEY: 'sk-abc',
      MODEL_NAME: 'llama3.1',
      MODEL_TIMEOUT_MS: '30000',
      MODEL_MAX_RETRIES: '0',
      RUN_EVENTS_HEARTBEAT_MS: '500',
    });
    assert.deepEqual(
      { ...set.model, tokensPerDay: undefined, allowed: undefined, contextMaxBytes: undefined },
      { api: 'chat', baseUrl: 'http://localhost:11434/v1', apiKey: 'sk-abc', name: 'llama3.1', timeoutMs: 30_000, maxRetries: 0, tokensPerDay: undefined, allowed: undefined, contextMaxBytes: undefined },
    );
    assert.equal(set.runEvents.heartbeatMs, 500);
    for (const [name, bad] of [['MODEL_BASE_URL', 'ftp://x'], ['MODEL_TIMEOUT_MS', '10'], ['MODEL_MAX_RETRIES', '11'], ['RUN_EVENTS_HEARTBEAT_MS', '0']]) {
      assert.throws(() => loadConfig({ ...valid, [name!]: bad }), new RegExp(name!), `${name}=${bad}`);
    }
    assert.throws(
      () => loadConfig({ ...valid, MODEL_API_KEY: 'sk-secret with space' }),
      (err: Error) => /MODEL_API_KEY: must not contain whitespace/.test(err.message) && !err.message.includes('sk-secret'),
    );
  });

  it('parses overrides', () => {
    const c = loadConfig({
      ...valid,
      TRUST_PROXY: '2',
      INITIAL_BALANCE: '5',
      PUBLIC_BASE_URL: 'https://api.example.com/',
      RUN_CONCURRENCY_PER_ACCOUNT: '3',
      RUN_TIMEOUT_MS: '60000',
      RUN_BACKLOG_PER_SECOND: '2.5',
      CHAIN_FIRE_BUDGET: '7',
    });
    assert.deepEqual(c.runs, { concurrencyPerAccount: 3, timeoutMs: 60_000, backlogPerSecond: 2.5 });
    assert.equal(c.fires.chainBudget, 7);
    assert.equal(c.http.trustProxy, 2);
    assert.equal(c.billing.initialBalance, 5);
    assert.equal(c.http.publicBaseUrl, 'https://api.example.com');
  });

  it('takes TRUST_PROXY as false, a hop count, or trusted proxy addresses and CIDRs', () => {
    const trustProxy = (value: string) => loadConfig({ ...valid, TRUST_PROXY: value }).http.trustProxy;
    assert.equal(trustProxy('false'), false);
    assert.equal(trustProxy('0'), false);
    assert.equal(trustProxy('1'), 1);
    assert.deepEqual(trustProxy('10.0.0.0/8'), ['10.0.0.0/8']);
    assert.deepEqual(trustProxy(' 10.0.0.7 , 192.168.0.0/16,2001:db8::/32, ::1 ,loopback'), ['10.0.0.7', '192.168.0.0/16', '2001:db8::/32', '::1', 'loopback']);
    for (const bad of ['10.0.0.0/33', '10.0.0', 'proxy.internal', '10.0.0.1,', '-1', '1.5', '2001:db8::/129']) {
      assert.throws(() => trustProxy(bad), /TRUST_PROXY/, bad);
    }
  });

  it('takes DNS_SERVERS as nameserver addresses with optional ports; unset is the system\'s', () => {
    const servers = (value?: string) => loadConfig({ ...valid, DNS_SERVERS: value }).network.dnsServers;
    assert.equal(servers(undefined), null);
    assert.deepEqual(servers(' 1.1.1.1 , 127.0.0.1:5353,::1,[2001:db8::53]:53'), ['1.1.1.1', '127.0.0.1:5353', '::1', '[2001:db8::53]:53']);
    for (const bad of ['dns.internal', '1.1.1', '1.1.1.1:0', '1.1.1.1:70000', '1.1.1.1,', '::1:53x', '10.0.0.1:53:53']) {
      assert.throws(() => servers(bad), /DNS_SERVERS: must be a comma-separated list of nameserver addresses/, bad);
    }
  });

  it('refuses to trust every X-Forwarded-For and says what to write instead', () => {
    for (const everything of ['true', 'TRUE', 'yes', '0.0.0.0/0', '::/0', '10.0.0.1,0.0.0.0/0']) {
      assert.throws(
        () => loadConfig({ ...valid, TRUST_PROXY: everything }),
        (err: Error) => {
          assert.ok(err instanceof ConfigError, everything);
          assert.match(err.message, /TRUST_PROXY: .*every X-Forwarded-For/, everything);
          assert.match(err.message, /number of proxies .*\(e\.g\. 1\).* addresses or CIDRs/, everything);
          return true;
        },
      );
    }
  });

  it('states each variable once in lib/config.ts: its name, parser, default and place in the config together', () => {
    const text = readFileSync(path.join(__dirname, '../../lib/config.ts'), 'utf8');
    for (const name of Object.keys(configVariables)) {
      assert.equal(text.match(new RegExp(`\\b${name}\\b`, 'g'))?.length, 1, `${name} is named more than once in lib/config.ts`);
    }
  });
});
