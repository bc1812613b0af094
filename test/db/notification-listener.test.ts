import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { createNotificationListener } from '../../db/notifications';
import { onCleanup } from '../helpers/cleanup';
import { createTestDatabase } from '../helpers/database';
import { waitFor } from '../helpers/processes';
import { proxyToDatabase } from '../helpers/tcp-proxy';

/** db/notifications.ts: the one LISTEN connection of a process, against a database host that drops packets. */
describe('the LISTEN connection', () => {
  it('gives up a handshake nobody answers within its connect timeout, tries again, and listens once the host answers', async (t) => {
    const database = await createTestDatabase(t);
    const { proxy, url: proxied } = await proxyToDatabase(t, database.url);
    proxy.hold(); // connections are accepted and never answered

    const logged: string[] = [];
    const listener = createNotificationListener({ connectionString: proxied, channel: 'listener_probe', connectTimeoutMs: 300, log: (msg) => logged.push(msg) });
    // Bounded: a listener stuck in a handshake (the defect this tests for) would hold close() for ever.
    onCleanup(t, () => Promise.race([listener.close(), sleep(2_000)]));
    const payloads: string[] = [];
    listener.subscribe({ notified: (p) => payloads.push(p), reconnected: () => {} });

    // While the host is silent: the attempt times out and is retried, rather than waiting for ever.
    await waitFor('a timed-out attempt', async () => logged.some((m) => m.includes('could not connect; retrying')), 5_000);
    assert.equal(listener.connected(), false);

    await proxy.restore();
    await waitFor('the listener up again', async () => listener.connected(), 15_000);
    await database.db.query(`NOTIFY listener_probe, 'hello'`);
    await waitFor('the notification', async () => payloads.includes('hello'), 5_000);
  });
});
