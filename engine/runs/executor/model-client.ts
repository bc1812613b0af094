import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { Config } from '../../../lib/config';

/**
 * The one way the engine talks to a language model: the official `openai` client on the OpenAI Chat
 * Completions protocol (`POST {MODEL_BASE_URL}/chat/completions`), which OpenAI, Azure, Ollama, vLLM,
 * LM Studio and most gateways speak. One client per worker process.
 *
 * Retries happen inside the call, by the client: 429, 408, 409, 5xx, connection errors and timeouts are
 * retried MODEL_MAX_RETRIES times with exponential backoff (0.5 s doubling to 8 s, with jitter), or after
 * the provider's Retry-After. What still fails is a ModelError: `refused` (a 4xx: the request, the key
 * or the model is wrong, and asking again would change nothing) or not (the provider stayed unavailable).
 * MODEL_API_KEY never appears in a ModelError's message (redactKey), and the client logs nothing.
 */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly refused: boolean,
  ) {
    super(message);
  }
}

/** Thrown when the call was torn down by `signal` (the step was cancelled, the worker is stopping). */
export class ModelCallAborted extends Error {}

export interface ModelClient {
  /**
   * The provider's answer to `body`, streamed (`stream: true`, usage included): `onText` is told each piece
   * of the answer's text as it arrives, in order. A provider that refuses streaming is asked again without
   * it, and from then on without it (this process): its answer comes whole, `onText` told nothing.
   */
  complete(body: ChatCompletionCreateParamsNonStreaming, signal?: AbortSignal, onText?: (text: string) => void): Promise<ChatCompletion>;
}

/**
 * Whether a refusal of a streamed request is the provider refusing `stream: true` itself: a 501, or a 400,
 * 415 or 422 whose message names streaming ("Unsupported parameter: 'stream'", "stream_options is not
 * supported", …). Any other refusal is the request's: asking again without streaming would change nothing.
 */
const refusesStreaming = (err: unknown) =>
  err instanceof OpenAI.APIError && (err.status === 501 || ([400, 415, 422].includes(err.status as number) && /stream/i.test(err.message)));

/**
 * The key out of a provider's message: the key itself, and any word holding its first 8 or last 6
 * characters (providers echo keys partly masked, e.g. "Incorrect API key provided: sk-proj-****…Ac0A").
 */
export function redactKey(message: string, key: string | null): string {
  if (!key) return message;
  let out = message.split(key).join('[redacted]');
  if (key.length >= 12) {
    const head = key.slice(0, 8);
    const tail = key.slice(-6);
    out = out.replace(/\S+/g, (word) => (word.includes(head) || word.includes(tail) ? '[redacted]' : word));
  }
  return out;
}

/** The system error code (ECONNREFUSED, …) somewhere down a fetch error's causes. */
function errorCode(err: unknown, depth = 0): string | undefined {
  if (!err || typeof err !== 'object' || depth > 3) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^[A-Z_]+$/.test(code) ? code : errorCode((err as { cause?: unknown }).cause, depth + 1);
}

/** A model client for the deployment's MODEL_BASE_URL, or null when none is configured. */
export function createModelClient(model: Config['model']): ModelClient | null {
  if (!model.baseUrl) return null;
  const openai = new OpenAI({
    baseURL: model.baseUrl,
    // Set explicitly, each of them: the client would otherwise read OPENAI_API_KEY, OPENAI_ADMIN_KEY, … from
    // the environment and send them to whatever MODEL_BASE_URL names.
    apiKey: model.apiKey ?? 'none',
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    // No key (a local Ollama, a gateway that authenticates otherwise): no Authorization header at all.
    defaultHeaders: model.apiKey ? {} : { Authorization: null },
    maxRetries: model.maxRetries,
    timeout: model.timeoutMs,
    logLevel: 'off',
  });
  const describe = (err: unknown) => redactKey(err instanceof Error ? err.message : String(err), model.apiKey);

  /** False once the provider refused a streamed request and answered the same one unstreamed. */
  let streams = true;

  async function streamed(body: ChatCompletionCreateParamsNonStreaming, signal: AbortSignal | undefined, onText?: (text: string) => void): Promise<ChatCompletion> {
    const stream = openai.chat.completions.stream({ ...body, stream: true, stream_options: { include_usage: true } }, { signal });
    if (onText) stream.on('content.delta', ({ delta }) => delta && onText(delta));
    return await stream.finalChatCompletion();
  }

  async function call(body: ChatCompletionCreateParamsNonStreaming, signal: AbortSignal | undefined, onText?: (text: string) => void): Promise<ChatCompletion> {
    if (!streams) return await openai.chat.completions.create(body, { signal });
    try {
      return await streamed(body, signal, onText);
    } catch (err) {
      if (!refusesStreaming(err) || signal?.aborted) throw err;
      // Asked again without streaming: its answer (or its refusal) is the call's.
      const answer = await openai.chat.completions.create(body, { signal });
      streams = false;
      return answer;
    }
  }

  return {
    async complete(body, signal, onText) {
      try {
        return await call(body, signal, onText);
      } catch (err) {
        if (err instanceof OpenAI.APIUserAbortError || signal?.aborted) throw new ModelCallAborted('the model call was aborted');
        if (err instanceof OpenAI.APIConnectionTimeoutError) {
          throw new ModelError(`the model provider did not answer within ${model.timeoutMs} ms (${model.maxRetries + 1} attempts)`, false);
        }
        if (err instanceof OpenAI.APIConnectionError) {
          // The error code only: the cause names the provider's address, which is the operator's business.
          const code = errorCode(err.cause);
          throw new ModelError(`the model provider could not be reached (${model.maxRetries + 1} attempts${code ? `; ${code}` : ''})`, false);
        }
        if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
          const retryable = err.status === 408 || err.status === 409 || err.status === 429 || err.status >= 500;
          const message = describe(err).replace(/^\d{3} /, '');
          if (retryable) throw new ModelError(`the model provider answered HTTP ${err.status} (${model.maxRetries + 1} attempts): ${message}`, false);
          throw new ModelError(`the model provider refused the request (HTTP ${err.status}): ${message}`, true);
        }
        // A stream that broke off or made no sense (OpenAIError): the provider's fault, as a 5xx would be.
        throw new ModelError(`the model call failed: ${describe(err)}`, false);
      }
    },
  };
}
