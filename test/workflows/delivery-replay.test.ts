import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { TASK_QUEUE, workflowIds } from '../../engine/temporal/names';
import { WORKFLOW_TYPES } from '../../engine/contract';
import type { DeliveryInput } from '../../engine/contract';
import { suiteContext } from '../helpers/cleanup';
import { testConfig } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { engineActivities, quietRuntime, whileWorkersRun, workflowBundle } from '../helpers/engine';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { startTimeSkippingServer } from '../helpers/time-skipping';

type History = temporal.api.history.v1.IHistory;

/**
 * The delivery workflow's determinism across the Retry-After change (workflows/delivery.ts): a history
 * recorded by the workflow code from before it (its attempts answered a plain 'retry'; receiver: 500,
 * then 429 with `Retry-After: 7`, then 200, schedule 0,1s,1s,1s) replays on today's code, and today's
 * code waits the Retry-After (a 7 s timer, on the time-skipping server) and replays its own history.
 */
describe('delivery workflow replay (time-skipping server)', () => {
  const suite = suiteContext();
  let env: TestWorkflowEnvironment;
  let database: TestDatabase;
  let receiver: Receiver;

  before(async () => {
    quietRuntime();
    env = await startTimeSkippingServer(suite);
    database = await createTestDatabase(suite);
    receiver = await startReceiver(suite, (_, i) => (i === 0 ? { status: 500 } : i === 1 ? { status: 429, headers: { 'retry-after': '7' } } : { status: 200 }));
  });

  const timers = (history: History) =>
    (history.events ?? []).filter((e) => e.timerStartedEventAttributes).map((e) => Number(e.timerStartedEventAttributes!.startToFireTimeout!.seconds));

  it('replays a history recorded before attempts answered their delay', async () => {
    const encoded = fs.readFileSync(path.join(__dirname, 'fixtures/delivery-before-retry-after.b64'), 'utf8');
    const history = temporal.api.history.v1.History.decode(Buffer.from(encoded.trim(), 'base64'));
    assert.deepEqual(timers(history), [1, 1], 'then, the 429 was followed after the schedule\'s 1 s');
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history);
  });

  it('waits the Retry-After today, and replays its own history', async () => {
    const config = testConfig(database.url);
    const { rows } = await database.db.query<{ delivery_id: string }>(
      `WITH u AS (INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id),
            a AS (INSERT INTO accounts (owner_user_id, name, balance) SELECT id, 'acct', 0 FROM u RETURNING id),
            w AS (INSERT INTO webhooks (account_id, name, direction, url, events) SELECT id, 'busy', 'outgoing', $2, ARRAY['*'] FROM a RETURNING id, account_id),
            e AS (INSERT INTO events (account_id, type, data) SELECT id, 'webhook.test', '{}' FROM a RETURNING id)
       INSERT INTO deliveries (account_id, webhook_id, event_id) SELECT w.account_id, w.id, e.id FROM w, e RETURNING id AS delivery_id`,
      [`${randomUUID()}@example.com`, `${receiver.url}/hook`],
    );
    const deliveryId = rows[0]!.delivery_id;
    const activities = engineActivities(database.db, config, env.client);
    const input: DeliveryInput = { deliveryId, generation: 0, delaysMs: [0, 1000, 1000, 1000], timeoutMs: 5000 };
    const history = await whileWorkersRun(env.nativeConnection, activities, async () => {
      const h = await env.client.workflow.start(WORKFLOW_TYPES.delivery, { workflowId: workflowIds.delivery(deliveryId), taskQueue: TASK_QUEUE, args: [input] });
      assert.equal(await h.result(), 'succeeded');
      return h.fetchHistory();
    });
    assert.deepEqual(timers(history), [1, 7], 'the schedule\'s 1 s, then the 429\'s Retry-After: 7 s');
    assert.equal(receiver.requests.length, 3);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history);
  });
});
