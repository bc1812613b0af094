import type { ServerResponse } from 'node:http';
import type { EventSink } from './services/run-events';

/**
 * A Server-Sent Events response over the raw HTTP response (the route has hijacked the reply): the sink a
 * live stream writes to, measuring what the client has not taken yet from the response's own count
 * (`writableLength`: its buffer and its socket's), and `finish` to end it.
 */
export function openEventStream(raw: ServerResponse, headers: Record<string, string | string[]>): EventSink & { finish: (graceMs: number) => Promise<void> } {
  raw.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
    'api-version': '1',
  });
  const gone = new AbortController();
  raw.on('close', () => gone.abort());

  /** Resolves on `drain`, the response closing, `signal` aborting or after `ms`, whichever comes first. */
  const drained = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (raw.destroyed || signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        raw.off('drain', done);
        raw.off('close', done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      raw.on('drain', done);
      raw.on('close', done);
      signal?.addEventListener('abort', done, { once: true });
    });

  // A reset, not a FIN queued behind what the client never read: the kernel drops its buffers too.
  const disconnect = () => (raw.socket ? raw.socket.resetAndDestroy() : raw.destroy());

  return {
    signal: gone.signal,
    write: (chunk) => (raw.destroyed ? false : raw.write(chunk)),
    unsent: () => raw.writableLength,
    drained,
    disconnect,
    /**
     * Ends the response; a client that has not taken the rest of it within `graceMs` is disconnected, so a
     * socket that stopped reading cannot keep what it did not take in this process's memory.
     */
    async finish(graceMs: number): Promise<void> {
      if (raw.destroyed) return;
      raw.end();
      if (raw.writableFinished) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          raw.off('finish', done);
          raw.off('close', done);
          resolve();
        };
        const timer = setTimeout(() => {
          disconnect();
          done();
        }, graceMs);
        raw.on('finish', done);
        raw.on('close', done);
      });
    },
  };
}
