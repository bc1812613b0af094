import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser } from '../helpers/app';
import { onCleanup, type Cleanup } from '../helpers/cleanup';
import { processEnv } from '../helpers/config';
import { createTestDatabase } from '../helpers/database';
import { startModelServer, textReply, toolCallsReply } from '../helpers/model-server';
import { freePort, startProcess, waitFor, waitForApi } from '../helpers/processes';
import { startReceiver, type Receiver } from '../helpers/receiver';

/** OTLP's protobuf message, as the SDK's own exporter encodes it. */
interface ProtobufMessage {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: { bytes: typeof String }): unknown;
}
const { ExportTraceServiceRequest } = (
  require('@opentelemetry/otlp-transformer/build/src/generated/root') as { opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtobufMessage } } } } } }
).opentelemetry.proto.collector.trace.v1;

/**
 * Tracing (docs/operations.md § Tracing) across the real API and worker processes: one hook request is
 * one trace, from the API's request span through the event's fan-out, the outbox and Temporal to each
 * delivery attempt's POST, which carries the trace's `traceparent` to the receiver; with no OTLP
 * endpoint nothing is exported and nothing propagated.
 */

/** A span as OTLP/HTTP JSON carries it, with the service that exported it. */
interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  attributes: Record<string, unknown>;
  links?: { traceId: string; spanId: string }[];
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const valueOf = (v: AnyValue) => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;

/** Every span the OTLP receiver was sent (JSON: OTEL_EXPORTER_OTLP_PROTOCOL=http/json). */
function exportedSpans(otlp: Receiver): ExportedSpan[] {
  const spans: ExportedSpan[] = [];
  for (const req of otlp.requests) {
    assert.equal(req.url, '/v1/traces');
    const body = JSON.parse(req.body) as {
      resourceSpans: { resource: { attributes: { key: string; value: AnyValue }[] }; scopeSpans: { spans: (Omit<ExportedSpan, 'service' | 'attributes'> & { attributes?: { key: string; value: AnyValue }[] })[] }[] }[];
    };
    for (const rs of body.resourceSpans) {
      const service = String(valueOf(rs.resource.attributes.find((a) => a.key === 'service.name')!.value));
      for (const ss of rs.scopeSpans) {
        for (const s of ss.spans) spans.push({ ...s, service, attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, valueOf(a.value)])) });
      }
    }
  }
  return spans;
}

const SPAN_KIND_INTERNAL = 1;
/** What OTEL_GENAI_CAPTURE_CONTENT=true adds: the tenant's text. */
const CONTENT_ATTRIBUTES = ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result'];

/**
 * A model–tool–model run of the agent `agentId` (named `thinks`, model `m-traced`, tool `probe`) in GenAI's
 * terms (lib/tracing/genai.ts, workflows/agent-span.ts): `invoke_agent thinks` around two `chat m-traced`
 * client spans and an `execute_tool probe` between them, with their gen_ai.* attributes, all in `traceId`.
 */
async function genAiSpans(otlp: Receiver, traceId: string, agentId: string) {
  const found = await waitFor('the run\'s GenAI spans', async () => {
    const inTrace = exportedSpans(otlp).filter((s) => s.traceId === traceId);
    const agent = inTrace.find((s) => s.name === 'invoke_agent thinks');
    const chats = inTrace.filter((s) => s.name === 'chat m-traced').sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)));
    const tool = inTrace.find((s) => s.name === 'execute_tool probe');
    return agent && chats.length === 2 && tool && { inTrace, agent, chats, tool };
  }, 20_000).catch((err) => {
    throw new Error(`${err}\nspans: ${exportedSpans(otlp).filter((s) => s.traceId === traceId).map((s) => s.name).join(', ')}`);
  });
  const { inTrace, agent, chats, tool } = found;
  assert.equal(agent.kind, SPAN_KIND_INTERNAL);
  assert.equal(agent.service, 'agent-platform-worker');
  assert.deepEqual(
    [agent.attributes['gen_ai.operation.name'], agent.attributes['gen_ai.agent.name'], agent.attributes['gen_ai.agent.id'], agent.attributes['gen_ai.provider.name'], agent.attributes['gen_ai.request.model']],
    ['invoke_agent', 'thinks', agentId, 'openai', 'm-traced'],
  );
  assert.equal(agent.attributes['error.type'], undefined, 'the run succeeded');
  for (const [i, chat] of chats.entries()) {
    assert.equal(chat.kind, SPAN_KIND_CLIENT, 'a model call is a client span');
    assert.equal(chat.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(chat.attributes['gen_ai.provider.name'], 'openai');
    assert.equal(chat.attributes['gen_ai.request.model'], 'm-traced');
    assert.equal(chat.attributes['gen_ai.response.model'], 'scripted', 'the model the provider says answered');
    // toolCallsReply's usage, then textReply's (test/helpers/model-server.ts).
    assert.deepEqual([chat.attributes['gen_ai.usage.input_tokens'], chat.attributes['gen_ai.usage.output_tokens']].map(Number), i === 0 ? [20, 7] : [10, 5]);
    assert.equal(chat.attributes['server.address'], '127.0.0.1');
  }
  assert.equal(tool.kind, SPAN_KIND_INTERNAL);
  assert.equal(tool.attributes['gen_ai.operation.name'], 'execute_tool');
  assert.equal(tool.attributes['gen_ai.tool.name'], 'probe');
  assert.match(String(tool.attributes['gen_ai.tool.call.id']), /\S/);
  // Parent links: each chat and the tool call lead up (through Temporal's activity spans) to the run's span,
  // and the tool's POST is the tool call's child.
  const byId = new Map(inTrace.map((s) => [s.spanId, s]));
  const ancestors = (span: ExportedSpan) => {
    const up: string[] = [];
    for (let s = byId.get(span.parentSpanId ?? ''); s; s = byId.get(s.parentSpanId ?? '')) up.push(s.spanId);
    return up;
  };
  for (const s of [...chats, tool]) assert.ok(ancestors(s).includes(agent.spanId), `${s.name} is not under invoke_agent`);
  const post = inTrace.find((s) => s.kind === SPAN_KIND_CLIENT && String(s.attributes['http.url'] ?? s.attributes['url.full']).includes('/probe'));
  assert.equal(post?.parentSpanId, tool.spanId, 'the tool\'s request is a child of execute_tool');
  return found;
}

/** The API and worker processes with `extraEnv` (and the API also `apiEnv`), killed when `t` ends. */
async function startStack(t: Cleanup, extraEnv: Record<string, string>, apiEnv: Record<string, string> = {}) {
  const database = await createTestDatabase(t);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = processEnv(database.url, __filename, port, {
    WEBHOOK_RETRY_SCHEDULE: '0s,1s',
    WEBHOOK_TIMEOUT_MS: '3000',
    RECONCILE_INTERVAL_MS: '500',
    ...extraEnv,
  });
  const apiProcess = startProcess('api/server.ts', { ...env, ...apiEnv });
  const worker = startProcess('worker/main.ts', env);
  onCleanup(t, () => apiProcess.stop('SIGKILL'));
  onCleanup(t, () => worker.stop('SIGKILL'));
  await waitForApi(base, apiProcess);
  await waitFor('the worker to poll', async () => worker.output().includes('[worker] polling task queue'), 60_000).catch((err) => {
    throw new Error(`${err}\n--- worker output ---\n${worker.output()}`);
  });
  return { base, api: apiProcess, worker };
}

/** The API process alone, exporting to `otlpUrl` (with `extraEnv`), killed when `t` ends; its base URL. */
async function startTracedApi(t: Cleanup, otlpUrl: string, extraEnv: Record<string, string> = {}): Promise<string> {
  const database = await createTestDatabase(t);
  const port = await freePort();
  const apiProcess = startProcess('api/server.ts', processEnv(database.url, __filename, port, { OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl, OTEL_BSP_SCHEDULE_DELAY: '100', ...extraEnv }));
  onCleanup(t, () => apiProcess.stop('SIGKILL'));
  const base = `http://127.0.0.1:${port}`;
  await waitForApi(base, apiProcess);
  return base;
}

/** A receiver that refuses each delivery's first attempt (503), so the second is made by its workflow on the worker. */
function refusingFirstAttempts(t: Cleanup) {
  const seen = new Set<string>();
  return startReceiver(t, (req) => {
    const id = req.headers['webhook-id']!;
    if (seen.has(id)) return { status: 200 };
    seen.add(id);
    return { status: 503 };
  });
}

/** A secret in the outgoing webhook's query: no exported span may hold it. */
const DELIVERY_SECRET = 'delivery-secret-0001';

/** An incoming webhook whose event an outgoing webhook to `receiver` is subscribed to; answers the hook's path. */
async function hookToReceiver(base: string, receiver: Receiver): Promise<string> {
  const user = await registerUser(base);
  await api(base, user).ok('POST', '/api/webhooks', { name: 'out', url: `${receiver.url}/hook?token=${DELIVERY_SECRET}`, events: ['webhook.received'] });
  const incoming = await api(base, user).ok('POST', '/api/webhooks', { name: 'in', direction: 'incoming' });
  return `/api/hooks/webhooks/${incoming.id}`;
}

describe('tracing: one trace from the hook request to the delivery', () => {
  it('with an OTLP endpoint: the hook, the fan-out, the outbox, Temporal and both attempts are one trace, and the receiver sees its traceparent', async (t) => {
    const otlp = await startReceiver(t);
    const receiver = await refusingFirstAttempts(t);
    // The API cannot reach Temporal: every workflow start waits in the outbox and the worker's reconciler
    // hands it off, so the trace gets from one process to the other through Postgres alone.
    const stack = await startStack(
      t,
      { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100' },
      { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` },
    );
    const hook = await hookToReceiver(stack.base, receiver);

    // A stranger's trace context (the hook needs no credential): the API starts a trace of its own, with the
    // caller's as a link, and neither their trace nor their baggage reaches the receiver (docs/operations.md § Tracing).
    const callerTraceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const accepted = await api(stack.base).post(hook, JSON.stringify({ hello: 'trace' }), { traceparent: `00-${callerTraceId}-${callerSpanId}-01`, baggage: 'tenant=someone-else' });
    assert.equal(accepted.statusCode, 202, accepted.body);

    await waitFor('both attempts at the receiver', async () => receiver.requests.length >= 2, 45_000);
    assert.equal(receiver.requests.length, 2);
    const requestSpan = await waitFor('the hook request\'s span', async () =>
      exportedSpans(otlp).find((s) => s.service === 'agent-platform-api' && s.name === 'request' && s.attributes['http.route'] === '/api/hooks/webhooks/:id'),
    15_000);
    const traceId = requestSpan.traceId;
    assert.notEqual(traceId, callerTraceId, 'a public route continues no caller\'s trace');
    assert.ok(!requestSpan.parentSpanId, 'the request span is a root');
    assert.deepEqual((requestSpan.links ?? []).map((l) => [l.traceId, l.spanId]), [[callerTraceId, callerSpanId]], 'the caller\'s trace is a link');
    for (const req of receiver.requests) {
      assert.match(req.headers.traceparent ?? '', new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`), 'each POST carries the hook\'s trace');
      assert.equal(req.headers.baggage, undefined, 'no baggage is sent out');
    }

    const expected = (spans: ExportedSpan[]) => {
      const inTrace = spans.filter((s) => s.traceId === traceId);
      const named = (service: string, name: string | RegExp) => inTrace.filter((s) => s.service === service && (typeof name === 'string' ? s.name === name : name.test(s.name)));
      return {
        inTrace,
        request: named('agent-platform-api', 'request').filter((s) => s.kind === SPAN_KIND_SERVER && s.attributes['http.route'] === '/api/hooks/webhooks/:id'),
        fanOut: named('agent-platform-api', 'event fan-out'),
        queries: named('agent-platform-api', /^pg\.query/),
        startWorkflow: inTrace.filter((s) => s.name === 'StartWorkflow:deliverWebhookWorkflow'),
        runWorkflow: named('agent-platform-worker', 'RunWorkflow:deliverWebhookWorkflow'),
        activity: named('agent-platform-worker', 'RunActivity:attemptDelivery'),
        attempts: inTrace.filter((s) => s.name === 'delivery attempt'),
        posts: inTrace.filter((s) => s.kind === SPAN_KIND_CLIENT && s.name === 'POST'),
      };
    };
    const found = await waitFor(
      'the whole trace at the OTLP receiver',
      async () => {
        const f = expected(exportedSpans(otlp));
        return f.request.length === 1 && f.fanOut.length === 1 && f.runWorkflow.length >= 1 && f.activity.length >= 1 && f.attempts.length >= 2 && f.posts.length >= 2 && f;
      },
      30_000,
    ).catch((err) => {
      const names = exportedSpans(otlp).map((s) => `${s.service} ${s.traceId === traceId ? 'in' : 'out'} ${s.name}`);
      throw new Error(`${err}\nspans:\n${names.join('\n')}\n--- api ---\n${stack.api.output()}\n--- worker ---\n${stack.worker.output()}`);
    });

    // The fan-out and its queries run inside the request's trace.
    assert.ok(found.queries.length > 0, 'Postgres queries are spans of the trace');
    // Each says what it does: its statement's first keyword, not a bare prepared-statement number.
    for (const q of found.queries) assert.match(q.name, /^pg\.query:(?:(?:begin|commit|rollback|select|insert|update|delete|with)_\d+_\d+|BEGIN|COMMIT|ROLLBACK|SELECT|INSERT|UPDATE|DELETE|WITH) /, q.name);
    // (The API tried too, and failed: its start span is in the trace as well.)
    assert.ok(found.startWorkflow.some((s) => s.service === 'agent-platform-worker'), 'the workflow start, handed off by the worker\'s reconciler, is in the trace');
    // One attempt by the API (the first) and one by the worker (the workflow's), each with its POST.
    assert.deepEqual(found.attempts.map((s) => s.service).sort(), ['agent-platform-api', 'agent-platform-worker']);
    assert.deepEqual(found.posts.map((s) => s.service).sort(), ['agent-platform-api', 'agent-platform-worker']);
    // Each POST's span is the one whose id the receiver saw, a child of its attempt.
    const seenIds = receiver.requests.map((r) => r.headers.traceparent!.split('-')[2]).sort();
    assert.deepEqual(found.posts.map((s) => s.spanId).sort(), seenIds);
    const attemptIds = new Set(found.attempts.map((s) => s.spanId));
    for (const post of found.posts) assert.ok(attemptIds.has(post.parentSpanId!), `POST ${post.spanId} is a child of a delivery attempt`);
    // One tree: every span's parent is in the trace, up to the caller's span.
    const ids = new Set(found.inTrace.map((s) => s.spanId));
    const worker = found.attempts.find((s) => s.service === 'agent-platform-worker')!;
    const byId = new Map(found.inTrace.map((s) => [s.spanId, s]));
    const chain: string[] = [];
    for (let s: ExportedSpan | undefined = worker; s; s = byId.get(s.parentSpanId ?? '')) chain.push(s.name);
    assert.equal(chain.at(-1), 'request', `the worker's attempt leads back to the hook request: ${chain.join(' < ')}`);
    // The delivery's URL is exported as a read shows it: its token masked, in every span of both processes.
    const exported = JSON.stringify(otlp.requests.map((r) => r.body));
    assert.ok(!exported.includes(DELIVERY_SECRET), 'a query secret in an exported span');
    assert.ok(found.posts.every((s) => String(s.attributes['url.full'] ?? s.attributes['http.url']).includes('token=••••0001')), JSON.stringify(found.posts.map((s) => s.attributes)));
    await waitFor('every parent exported', async () => found.inTrace.every((s) => !s.parentSpanId || ids.has(s.parentSpanId)), 5_000).catch(() => {
      const orphans = found.inTrace.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId));
      assert.fail(`spans whose parent is not in the trace: ${orphans.map((s) => `${s.service} ${s.name}`).join(', ')}`);
    });
  });

  it('a run started with a traceparent: its model calls and its tool call carry the trace, each a client span of the worker', async (t) => {
    const otlp = await startReceiver(t);
    const models = await startModelServer(t);
    models.script('m-traced', (_call, n) => (n === 0 ? toolCallsReply([{ name: 'probe', arguments: { q: 1 } }]) : textReply('done')));
    const tools = await startReceiver(t, () => ({ body: { probed: true } }));
    const stack = await startStack(t, {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      MODEL_BASE_URL: models.baseUrl,
      MODEL_API_KEY: 'sk-tracing-test-key',
    });
    const user = await registerUser(stack.base);
    const agent = await api(stack.base, user).ok('POST', '/api/agents', { name: 'thinks', configJson: { model: 'm-traced' } });
    await api(stack.base, user).ok('POST', `/api/agents/${agent.id}/tools`, { type: 'custom', name: 'probe', configJson: { endpoint: `${tools.url}/probe?api_key=tool-secret-0002`, method: 'POST', bodyTemplate: '{{input}}' } });
    const traceId = randomBytes(16).toString('hex');
    await api(stack.base, user).ok('POST', `/api/agents/${agent.id}/runs`, { input: 'probe it' }, { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`, baggage: 'user=someone' });

    await waitFor('both model calls', async () => models.callsFor('m-traced').length >= 2, 30_000);
    const sent = [...models.callsFor('m-traced').map((c) => c.headers.traceparent), tools.requests[0]?.headers.traceparent];
    for (const tp of sent) assert.match(String(tp), new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`), 'the model and the tool are called in the run\'s trace');
    for (const headers of [...models.callsFor('m-traced').map((c) => c.headers), tools.requests[0]!.headers]) assert.equal(headers.baggage, undefined, 'no baggage is sent out');
    const seen = new Set(sent.map((tp) => String(tp).split('-')[2]));
    // Each traceparent names a client span the worker exported in that trace (the model's by fetch, the tool's by http).
    await waitFor('the client spans at the OTLP receiver', async () => {
      const clients = exportedSpans(otlp).filter((s) => s.traceId === traceId && s.kind === SPAN_KIND_CLIENT && s.service === 'agent-platform-worker');
      return [...seen].every((id) => clients.some((s) => s.spanId === id));
    }, 15_000);
    // The tool's URL is exported as a read shows it: its api_key masked.
    assert.ok(!JSON.stringify(otlp.requests.map((r) => r.body)).includes('tool-secret-0002'), 'a query secret in an exported span');
    const toolSpan = exportedSpans(otlp).find((s) => s.kind === SPAN_KIND_CLIENT && String(s.attributes['http.url'] ?? s.attributes['url.full']).includes('/probe'));
    assert.match(String(toolSpan?.attributes['http.url'] ?? toolSpan?.attributes['url.full']), /\/probe\?api_key=••••0002$/);

    // The run in GenAI's terms, without the tenant's text (OTEL_GENAI_CAPTURE_CONTENT is not set).
    const genAi = await genAiSpans(otlp, traceId, agent.id);
    for (const s of [genAi.agent, ...genAi.chats, genAi.tool]) {
      for (const key of CONTENT_ATTRIBUTES) assert.equal(s.attributes[key], undefined, `${s.name} carries ${key} though content capture is off`);
    }
    assert.ok(!JSON.stringify(otlp.requests.map((r) => r.body)).includes('probe it'), 'the run\'s input is in an exported span');
  });

  it('with OTEL_GENAI_CAPTURE_CONTENT=true: the chat spans carry the messages sent and answered, the tool span its arguments and result', async (t) => {
    const otlp = await startReceiver(t);
    const models = await startModelServer(t);
    models.script('m-traced', (_call, n) => (n === 0 ? toolCallsReply([{ name: 'probe', arguments: { q: 'secretless' }, id: 'call_probe_1' }]) : textReply('all probed')));
    const tools = await startReceiver(t, () => ({ body: { probed: true } }));
    const stack = await startStack(t, {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_GENAI_CAPTURE_CONTENT: 'true',
      MODEL_BASE_URL: models.baseUrl,
      MODEL_API_KEY: 'sk-tracing-test-key',
    });
    const user = await registerUser(stack.base);
    const agent = await api(stack.base, user).ok('POST', '/api/agents', { name: 'thinks', configJson: { model: 'm-traced' } });
    await api(stack.base, user).ok('POST', `/api/agents/${agent.id}/tools`, {
      type: 'custom', name: 'probe', configJson: { endpoint: `${tools.url}/probe`, method: 'POST', bodyTemplate: '{{input}}', headers: { 'X-Tool-Key': 'hdr-secret-0003' } },
    });
    const traceId = randomBytes(16).toString('hex');
    await api(stack.base, user).ok('POST', `/api/agents/${agent.id}/runs`, { input: 'probe it' }, { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` });

    const genAi = await genAiSpans(otlp, traceId, agent.id);
    const [first, second] = genAi.chats;
    const sent = JSON.parse(String(first!.attributes['gen_ai.input.messages'])) as { role: string; parts: { type: string; content?: string }[] }[];
    assert.deepEqual(sent.at(-1), { role: 'user', parts: [{ type: 'text', content: 'probe it' }] });
    const asked = JSON.parse(String(first!.attributes['gen_ai.output.messages'])) as { role: string; parts: { type: string; name?: string; id?: string }[]; finish_reason: string }[];
    assert.deepEqual(asked.map((m) => [m.role, m.finish_reason, m.parts.map((p) => [p.type, p.name, p.id])]), [['assistant', 'tool_calls', [['tool_call', 'probe', 'call_probe_1']]]]);
    const read = JSON.parse(String(second!.attributes['gen_ai.input.messages'])) as { role: string; parts: { type: string; id?: string; response?: string }[] }[];
    assert.deepEqual(read.at(-1), { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_probe_1', response: JSON.stringify({ probed: true }) }] });
    assert.match(String(second!.attributes['gen_ai.output.messages']), /all probed/);
    assert.deepEqual(JSON.parse(String(genAi.tool.attributes['gen_ai.tool.call.arguments'])), { q: 'secretless' });
    assert.deepEqual(JSON.parse(String(genAi.tool.attributes['gen_ai.tool.call.result'])), { probed: true });
    // The tool's secret header is no part of what is captured (only the model's arguments and the tool's answer).
    assert.ok(!JSON.stringify(otlp.requests.map((r) => r.body)).includes('hdr-secret-0003'), 'a tool header secret in an exported span');
  });

  it('without an OTLP endpoint: nothing is exported and no traceparent is sent on', async (t) => {
    const otlp = await startReceiver(t);
    const receiver = await refusingFirstAttempts(t);
    // The other OTEL_* variables alone turn nothing on.
    const stack = await startStack(t, { OTEL_SERVICE_NAME: 'should-not-export', OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_EXPORTER_OTLP_HEADERS: `x-otlp=${otlp.url}` });
    const hook = await hookToReceiver(stack.base, receiver);
    const traceId = randomBytes(16).toString('hex');
    const accepted = await api(stack.base).post(hook, JSON.stringify({ hello: 'no trace' }), { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` });
    assert.equal(accepted.statusCode, 202, accepted.body);
    await waitFor('both attempts at the receiver', async () => receiver.requests.length >= 2, 45_000);
    await sleep(500); // several export intervals, were anything batched
    for (const req of receiver.requests) assert.equal(req.headers.traceparent, undefined, 'no trace context is sent on');
    assert.equal(otlp.requests.length, 0);
  });

  it('an agent created with nothing listening makes no outbox claim (its trace has none); one with a webhook listening hands its delivery off', async (t) => {
    const otlp = await startReceiver(t);
    const receiver = await startReceiver(t);
    const base = await startTracedApi(t, otlp.url, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    const user = await registerUser(base);
    const create = async (name: string) => {
      const traceId = randomBytes(16).toString('hex');
      const res = await fetch(`${base}/api/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
        body: JSON.stringify({ name }),
      });
      assert.equal(res.status, 201, await res.text());
      return traceId;
    };
    const statementsOf = (traceId: string) => exportedSpans(otlp).filter((s) => s.traceId === traceId && s.name.startsWith('pg.query')).map((s) => String(s.attributes['db.statement']));
    const claims = (statements: string[]) => statements.filter((q) => /^UPDATE outbox SET available_at/.test(q));

    const quiet = await create('nothing listens');
    await waitFor('the quiet create\'s query spans', async () => statementsOf(quiet).some((q) => q.startsWith('INSERT INTO agents')), 15_000);
    // Then one with a webhook subscribed: its commit is handed off (the claim), in the request's trace.
    await api(base, user).ok('POST', '/api/webhooks', { name: 'out', url: `${receiver.url}/hook`, events: ['agent.created'] });
    const heard = await create('a webhook listens');
    await waitFor('the delivery of agent.created', async () => receiver.requests.length === 1, 15_000);
    await waitFor('the heard create\'s claim of the outbox', async () => claims(statementsOf(heard)).length > 0, 15_000);
    assert.deepEqual(claims(statementsOf(quiet)), [], 'the quiet create claimed the outbox');
  });

  it('over the default protocol, http/protobuf: the API\'s request span and its query spans arrive, decoded as a collector does', async (t) => {
    const otlp = await startReceiver(t);
    // No OTEL_EXPORTER_OTLP_PROTOCOL: what an operator who sets only the endpoint gets.
    const base = await startTracedApi(t, otlp.url);
    const user = await registerUser(base);
    const traceId = randomBytes(16).toString('hex');
    const read = await fetch(`${base}/api/agents`, { headers: { authorization: `Bearer ${user.accessToken}`, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
    assert.equal(read.status, 200);
    const spans = await waitFor(
      'the read\'s spans at the OTLP receiver',
      async () => {
        const inTrace = otlp.requests.flatMap((req) => {
          assert.equal(req.url, '/v1/traces');
          assert.equal(req.headers['content-type'], 'application/x-protobuf');
          const decoded = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(req.bytes), { bytes: String }) as {
            resourceSpans?: { scopeSpans?: { spans?: { traceId: string; name: string }[] }[] }[];
          };
          return (decoded.resourceSpans ?? []).flatMap((rs) => (rs.scopeSpans ?? []).flatMap((ss) => ss.spans ?? []));
        }).filter((s) => Buffer.from(s.traceId, 'base64').toString('hex') === traceId);
        return inTrace.some((s) => s.name === 'request') && inTrace.some((s) => s.name.startsWith('pg.query:select_')) && inTrace;
      },
      15_000,
    );
    assert.ok(spans.length >= 2);
  });
});
