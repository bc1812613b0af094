import pg from 'pg';
import { connectionLimits } from './pool';

/**
 * One LISTEN connection per process for a notification channel (run_events: migration 10 notifies
 * the run's id when one of its steps finishes or it ends). Subscribers are told each payload; none of
 * them holds a connection, however many there are. The connection is opened when the first subscriber
 * comes, and opened again (with backoff) when it drops: notifications sent while none listened are lost,
 * so whenever it comes up subscribers are told `reconnected` and read again what they watch.
 */
export interface NotificationSubscriber {
  notified(payload: string): void;
  reconnected(): void;
}

export interface NotificationListener {
  subscribe(s: NotificationSubscriber): () => void;
  /** Whether the LISTEN connection is up (for tests and health). */
  connected(): boolean;
  close(): Promise<void>;
}

const MAX_BACKOFF_MS = 30_000;

export function createNotificationListener(opts: {
  connectionString: string;
  channel: string;
  /** A handshake not answered in time fails and is tried again (DATABASE_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  log?: (msg: string, err?: unknown) => void;
}): NotificationListener {
  const { channel } = opts;
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
  const subscribers = new Set<NotificationSubscriber>();
  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let retry: NodeJS.Timeout | null = null;
  let backoffMs = 500;
  let closed = false;

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: opts.connectionString, ...connectionLimits(opts.connectTimeoutMs) });
    c.on('notification', (n) => {
      if (n.channel !== channel || n.payload === undefined) return;
      for (const s of subscribers) s.notified(n.payload);
    });
    const lost = (err?: unknown) => {
      if (client !== c) return;
      client = null;
      c.removeAllListeners('notification');
      c.end().catch(() => {});
      if (!closed) {
        opts.log?.(`the ${channel} listener lost its connection; reconnecting`, err);
        schedule();
      }
    };
    c.on('error', lost);
    c.on('end', () => lost());
    await c.connect();
    await c.query(`LISTEN ${channel}`);
    if (closed) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    backoffMs = 500;
    // Anything notified before this connection listened is gone (while it was down, or before it first
    // came up): every subscriber reads again.
    for (const s of subscribers) s.reconnected();
  }

  function schedule(): void {
    if (retry || closed) return;
    retry = setTimeout(() => {
      retry = null;
      ensure();
    }, backoffMs);
    retry.unref();
    backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
  }

  function ensure(): void {
    if (client || connecting || closed) return;
    connecting = connect()
      .catch((err) => {
        opts.log?.(`the ${channel} listener could not connect; retrying`, err);
        schedule();
      })
      .finally(() => {
        connecting = null;
      });
  }

  return {
    subscribe(s) {
      subscribers.add(s);
      ensure();
      return () => void subscribers.delete(s);
    },
    connected: () => client !== null,
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await connecting;
      const c = client;
      client = null;
      subscribers.clear();
      await c?.end().catch(() => {});
    },
  };
}
