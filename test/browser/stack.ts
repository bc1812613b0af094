import { createTestDatabase } from '../helpers/database';
import { testEnv } from '../helpers/config';
import { startModelServer, textReply, toolCallsReply, type ModelCall, type ModelReply } from '../helpers/model-server';
import { freePort, startProcess, waitForApi } from '../helpers/processes';
import { startReceiver } from '../helpers/receiver';
import type { Cleanup } from '../helpers/cleanup';

/** The Temporal namespace of the browser tests' stack (npm test creates it on its dev server). */
export const BROWSER_NAMESPACE = 't-browser';

/** The model the console's agents think with in these tests (MODEL_NAME of the stack's worker). */
export const CONSOLE_MODEL = 'console-test';

/** The words the scripted agent passes as each required string argument (an MCP echo says them back). */
export const SCRIPTED_ARGUMENT = 'hello from the console';

/** Arguments for a function's schema: each required string property gets SCRIPTED_ARGUMENT, each required number 1. */
function argumentsFor(parameters: Record<string, unknown> | undefined): Record<string, unknown> {
  const properties = (parameters?.properties ?? {}) as Record<string, { type?: string }>;
  const required = (parameters?.required ?? []) as string[];
  return Object.fromEntries(required.map((name) => [name, properties[name]?.type === 'number' || properties[name]?.type === 'integer' ? 1 : SCRIPTED_ARGUMENT]));
}

/**
 * A deterministic agent: with tools offered and no tool answer yet, it calls the first tool (its required
 * arguments filled: argumentsFor); once a tool has answered, it says what the tool said. Each answer takes a
 * second, so a run's steps arrive one by one, a second apart, as a person watching would see them.
 */
export function scriptedAgent(call: ModelCall): ModelReply {
  const messages = call.body.messages;
  const asked = /^Write (\d+) words, one every (\d+) ms/.exec([...messages].reverse().find((m) => m.role === 'user')?.content ?? '');
  if (asked) return longAnswer(Number(asked[1]), Number(asked[2]));
  const toolAnswer = [...messages].reverse().find((m) => m.role === 'tool');
  const tool = call.body.tools?.[0]?.function;
  const reply = toolAnswer
    ? textReply(`The tool said: ${toolAnswer.content}`)
    : tool
      ? toolCallsReply([{ name: tool.name, arguments: argumentsFor(tool.parameters) }])
      : textReply('Hello from the scripted model.');
  return { ...reply, delayMs: 1000 };
}

/**
 * Asked "Write <n> words, one every <ms> ms": an answer of n words ("word1 word2 …"), streamed one word per
 * chunk with that wait between them (the run page's growing text, run-streaming.spec.ts).
 */
function longAnswer(words: number, everyMs: number): ModelReply {
  const pieces = Array.from({ length: words }, (_, i) => `word${i + 1}${i % 12 === 11 ? '\n' : ' '}`);
  return { ...textReply(pieces.join(''), { prompt_tokens: 10, completion_tokens: words }), pieces, pieceDelayMs: everyMs, delayMs: 500 };
}

export interface BrowserStack {
  /** Where the API serves the console: http://127.0.0.1:<port>. */
  url: string;
  databaseUrl: string;
  /** A loopback HTTP endpoint answering { price: 42 } (custom tools, outgoing webhooks point here). */
  receiverUrl: string;
}

/**
 * The real stack the console's browser tests drive: a database cloned from the migrated template, the API
 * process serving the built console, the worker, the scripted model server and a loopback receiver.
 * Stopped by `t` (the global set-up's teardown).
 */
export async function startBrowserStack(t: Cleanup, overrides: Record<string, string> = {}): Promise<BrowserStack> {
  const database = await createTestDatabase(t);
  const model = await startModelServer(t);
  model.script(CONSOLE_MODEL, scriptedAgent);
  const receiver = await startReceiver(t, () => ({ body: { price: 42, currency: 'USD' } }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = testEnv(database.url, {
    TEMPORAL_NAMESPACE: BROWSER_NAMESPACE,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: url,
    LOG_LEVEL: 'warn',
    MODEL_BASE_URL: model.baseUrl,
    MODEL_NAME: CONSOLE_MODEL,
    // Every test signs up and reloads from this one address: the per-address auth limit is not what they test.
    AUTH_RATE_LIMIT_MAX: '100000',
    TEMPORAL_UI_URL: 'http://127.0.0.1:8233',
    // Two attempts a second apart: a delivery to a failing receiver is failed (and can be retried) at once.
    WEBHOOK_RETRY_SCHEDULE: '0s,1s',
    // A tool call that hangs stays in flight for two minutes: the cancel test (run-screens.spec.ts) cancels one.
    TOOL_TIMEOUT_MS: '120000',
    ...overrides,
  });
  const api = startProcess('api/server.ts', env);
  t.after(() => api.stop('SIGTERM'));
  const worker = startProcess('worker/main.ts', env);
  t.after(() => worker.stop('SIGTERM'));
  await waitForApi(url, api);
  return { url, databaseUrl: database.url, receiverUrl: receiver.url };
}
