import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { scrubbedUrl } from '../url-secrets';

/**
 * Span attributes that hold a URL or a part of one, old and new semantic conventions: the HTTP client's
 * (a delivery's, a tool's, an MCP server's, the model's) and the server's (a hook's query token).
 */
const URL_ATTRIBUTES = ['url.full', 'http.url', 'http.target', 'url.path', 'url.original'] as const;
const QUERY_ATTRIBUTES = ['url.query'] as const;

/** The span's URL attributes scrubbed in place (its attributes object is the one exported). */
export function scrubSpanUrls(span: ReadableSpan): void {
  const attributes = span.attributes as Record<string, unknown>;
  for (const key of URL_ATTRIBUTES) {
    const value = attributes[key];
    if (typeof value === 'string') attributes[key] = scrubbedUrl(value);
  }
  for (const key of QUERY_ATTRIBUTES) {
    const value = attributes[key];
    if (typeof value !== 'string') continue;
    const bare = value.startsWith('?') ? value.slice(1) : value;
    attributes[key] = (value.startsWith('?') ? '?' : '') + scrubbedUrl(`?${bare}`).slice(1);
  }
}

/**
 * Wraps the exporting processor: every span's URL attributes are masked as reads mask a URL before it
 * leaves the process (docs/operations.md § Tracing), whichever instrumentation made it.
 */
export class UrlScrubbingProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}
  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }
  onEnd(span: ReadableSpan): void {
    scrubSpanUrls(span);
    this.next.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}
