import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, tracingConfig } from '../../lib/config';

describe('tracing configuration (lib/config.ts tracingConfig)', () => {
  it('is off without an OTLP endpoint, whatever else of OTEL_* is set', () => {
    assert.equal(tracingConfig('agent-platform-api', {}), null);
    assert.equal(tracingConfig('agent-platform-api', { OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_ENDPOINT: '' }), null);
  });

  it('is on with either endpoint; the process names itself unless OTEL_SERVICE_NAME does; protobuf unless asked for JSON', () => {
    assert.deepEqual(tracingConfig('agent-platform-worker', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), { serviceName: 'agent-platform-worker', protocol: 'http/protobuf', disabled: [], captureGenAiContent: false });
    assert.deepEqual(
      tracingConfig('agent-platform-api', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otlp.example.com/v1/traces', OTEL_SERVICE_NAME: 'api-eu', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }),
      { serviceName: 'api-eu', protocol: 'http/json', disabled: [], captureGenAiContent: false },
    );
    // The traces-specific protocol wins over the general one.
    assert.equal(tracingConfig('a', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })?.protocol, 'http/protobuf');
    assert.deepEqual(tracingConfig('a', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_NODE_DISABLED_INSTRUMENTATIONS: ' pg, http' })?.disabled, ['pg', 'http']);
    // Prompt and completion text on the GenAI spans only when asked for.
    assert.equal(tracingConfig('a', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_GENAI_CAPTURE_CONTENT: 'true' })?.captureGenAiContent, true);
    assert.equal(tracingConfig('a', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_GENAI_CAPTURE_CONTENT: 'false' })?.captureGenAiContent, false);
  });

  it('refuses what it cannot export to, naming the variable', () => {
    assert.throws(() => tracingConfig('a', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), (err: Error) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/protobuf or http\/json \(gRPC is not supported\)/);
      return true;
    });
    assert.throws(() => tracingConfig('a', { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), /OTEL_EXPORTER_OTLP_ENDPOINT/);
    assert.throws(() => tracingConfig('a', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_NODE_DISABLED_INSTRUMENTATIONS: 'pg,redis' }), /OTEL_NODE_DISABLED_INSTRUMENTATIONS: must be a comma-separated list of fastify, pg, http, undici/);
    assert.throws(() => tracingConfig('a', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_GENAI_CAPTURE_CONTENT: 'maybe' }), /OTEL_GENAI_CAPTURE_CONTENT/);
  });
});
