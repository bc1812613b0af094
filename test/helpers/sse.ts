/**
 * A Server-Sent Events client for tests, over fetch: every event and comment line as it arrives, and
 * how the stream ended. (Browsers' EventSource cannot send an Authorization header.)
 */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
  /** Date.now() when it arrived. */
  receivedAt: number;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** Events and comments in arrival order (a comment as `{ event: 'comment', data: <text> }`). */
  received: SseEvent[];
  events: () => SseEvent[];
  /** Resolves when the server ends the stream (or it is closed here). */
  ended: Promise<void>;
  /** Resolves once `n` events (not comments) have arrived. */
  waitForEvents: (n: number, timeoutMs?: number) => Promise<SseEvent[]>;
  close: () => void;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const received: SseEvent[] = [];
  const waiters: (() => void)[] = [];
  const events = () => received.filter((e) => e.event !== 'comment');
  const ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: SseEvent = { event: 'message', data: '', receivedAt: Date.now() };
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) received.push({ event: 'comment', data: line.slice(1).trim(), receivedAt: Date.now() });
            else if (line.startsWith('id: ')) event.id = line.slice(4);
            else if (line.startsWith('event: ')) event.event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0) received.push({ ...event, data: data.join('\n') });
          waiters.forEach((w) => w());
        }
      }
    } catch {
      // closed here
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    received,
    events,
    ended,
    waitForEvents: (n, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (events().length >= n) {
            clearTimeout(timer);
            resolve(events());
            return true;
          }
          return false;
        };
        const timer = setTimeout(() => reject(new Error(`${events().length} of ${n} events after ${timeoutMs} ms`)), timeoutMs);
        if (!check()) waiters.push(() => void check());
      }),
    close: () => controller.abort(),
  };
}
