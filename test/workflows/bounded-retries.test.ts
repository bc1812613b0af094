import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import pg from 'pg';
import type { Activities } from '../../activities';
import { isDeterministicFailure, withFailureClassification } from '../../activities/failures';
import { createEventsRepository } from '../../db/repositories/events';
import { createRunReplaysRepository } from '../../db/repositories/run-replays';
import { toReplay } from '../../api/mappers';
import { TASK_QUEUE, workflowIds } from '../../engine/temporal/names';
import { WORKFLOW_TYPES } from '../../engine/contract';
import { ATTEMPT_RETRY, ENGINE_RETRY } from '../../workflows/retry-policies';
import type { DeliveryInput, FireInput } from '../../engine/contract';
import { suiteContext } from '../helpers/cleanup';
import { testConfig } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { engineActivities, quietRuntime, whileWorkersRun } from '../helpers/engine';
import { startTimeSkippingServer } from '../helpers/time-skipping';

/**
 * Every activity of the fire, dispatch and delivery workflows retries a bounded number of times, and a
 * deterministic failure does not retry at all (docs/architecture.md § Limits and fairness): a hostile event can no longer keep every
 * worker busy for ever. Activities are mocked (samples-typescript's workflows-mocks) and backoffs
 * skipped on the time-skipping server.
 */
describe('bounded retries of the engine workflows (time-skipping server)', () => {
  const suite = suiteContext();
  let env: TestWorkflowEnvironment;
  let database: TestDatabase;
  let real: Activities;

  before(async () => {
    quietRuntime('ERROR'); // the failures below are on purpose
    env = await startTimeSkippingServer(suite);
    database = await createTestDatabase(suite);
    real = engineActivities(database.db, testConfig(database.url), env.client);
  });

  /** Runs `workflowType` once on a worker with these activities; answers its result or its failure. */
  async function run(activities: Partial<Activities>, workflowType: string, workflowId: string, input: unknown) {
    return whileWorkersRun(env.nativeConnection, { ...real, ...activities }, async () => {
      const handle = await env.client.workflow.start(workflowType, { workflowId, taskQueue: TASK_QUEUE, args: [input] });
      try {
        return { result: await handle.result(), failure: null };
      } catch (err) {
        assert.ok(err instanceof WorkflowFailedError, String(err));
        return { result: undefined, failure: err.cause };
      }
    });
  }

  /** A mock activity that always throws `make()` and counts its calls. */
  function failing(make: () => Error) {
    const calls = { n: 0 };
    const fn = async () => {
      calls.n++;
      throw make();
    };
    return { calls, fn };
  }

  async function anEvent() {
    const { rows } = await database.db.query<{ id: string }>(
      `WITH u AS (INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id)
       INSERT INTO accounts (owner_user_id, name, balance) SELECT id, 'acct', 0 FROM u RETURNING id`,
      [`${randomUUID()}@example.com`],
    );
    const event = await createEventsRepository(database.db).insertEvent({ accountId: rows[0]!.id, type: 'webhook.received', data: { payload: 'hostile' } });
    // Nothing listens in this account, so the event was written settled: put it as an event whose matching
    // was left to the worker is (undispatched), which is what an `event:<id>` workflow works on.
    await database.db.query(`UPDATE events SET dispatch_status = NULL, dispatch_result = NULL WHERE id = $1`, [event.id]);
    return event;
  }

  it(`a fan-out failing every time stops after ${ENGINE_RETRY.maximumAttempts} attempts; the event row and the workflow say why`, { timeout: 60_000 }, async () => {
    const event = await anEvent();
    const fanOut = failing(() => new Error('connection terminated unexpectedly'));
    const { failure } = await run({ matchEvent: fanOut.fn }, WORKFLOW_TYPES.event, workflowIds.event(event.id), { eventId: event.id });

    assert.equal(fanOut.calls.n, ENGINE_RETRY.maximumAttempts);
    assert.ok(failure instanceof ApplicationFailure);
    assert.equal(failure.type, 'EventMatchingFailed');
    assert.match(failure.message, /failed for good: connection terminated unexpectedly/);
    const { rows } = await database.db.query(`SELECT dispatch_status, dispatch_error FROM events WHERE id = $1`, [event.id]);
    assert.deepEqual(rows[0], { dispatch_status: 'failed', dispatch_error: 'connection terminated unexpectedly' });
  });

  it('a deterministic failure of the fan-out is not retried', async () => {
    const event = await anEvent();
    const fanOut = failing(() => new TypeError("Cannot read properties of undefined (reading 'eventType')"));
    const { failure } = await run(withFailureClassification({ matchEvent: fanOut.fn }), WORKFLOW_TYPES.event, workflowIds.event(event.id), {
      eventId: event.id,
    });
    assert.equal(fanOut.calls.n, 1);
    assert.ok(failure instanceof ApplicationFailure);
    const { rows } = await database.db.query(`SELECT dispatch_status FROM events WHERE id = $1`, [event.id]);
    assert.equal(rows[0].dispatch_status, 'failed');
  });

  it(`a fire failing every time stops after ${ENGINE_RETRY.maximumAttempts} attempts`, { timeout: 60_000 }, async () => {
    const triggerId = randomUUID();
    const record = failing(() => new Error('the database is down'));
    const input: FireInput = { triggerId, source: 'manual', fireId: randomUUID() };
    const { failure } = await run({ recordFire: record.fn }, WORKFLOW_TYPES.fire, workflowIds.fire(triggerId, `manual-${input.fireId}`), input);
    assert.equal(record.calls.n, ENGINE_RETRY.maximumAttempts);
    assert.ok(failure, 'the fire workflow failed, visibly');
  });

  it(`a delivery attempt failing every time stops after ${ATTEMPT_RETRY.maximumAttempts} tries and fails the delivery`, { timeout: 60_000 }, async () => {
    const event = await anEvent();
    const { rows } = await database.db.query<{ id: string }>(
      `WITH w AS (INSERT INTO webhooks (account_id, name, direction, url, events) VALUES ($1, 'w', 'outgoing', 'http://127.0.0.1:9/x', ARRAY['*']) RETURNING id)
       INSERT INTO deliveries (account_id, webhook_id, event_id) SELECT $1, w.id, $2 FROM w RETURNING id`,
      [event.account_id, event.id],
    );
    const deliveryId = rows[0]!.id;
    const attempt = failing(() => new Error('worker lost'));
    const input: DeliveryInput = { deliveryId, generation: 0, delaysMs: [0, 1000], timeoutMs: 1000 };
    const { result } = await run({ attemptDelivery: attempt.fn }, WORKFLOW_TYPES.delivery, workflowIds.delivery(deliveryId), input);
    assert.equal(result, 'failed');
    assert.equal(attempt.calls.n, ATTEMPT_RETRY.maximumAttempts);
    const { rows: after } = await database.db.query(`SELECT status, last_error FROM deliveries WHERE id = $1`, [deliveryId]);
    assert.deepEqual(after[0], { status: 'failed', last_error: 'internal error: worker lost' });
  });

  it('classifies every activity\'s failures alike: the same data error is not retried in a run, a delivery or a fire', async () => {
    const notAUuid = 'not-a-uuid';
    const calls: [string, () => Promise<unknown>][] = [
      ['beginRunStep', () => real.beginRunStep({ runId: notAUuid })],
      ['finishRun', () => real.finishRun({ runId: notAUuid })],
      ['attemptDelivery', () => real.attemptDelivery({ deliveryId: notAUuid, generation: 0, attempt: 1, nextDelayMs: null, timeoutMs: 1000 })],
      ['recordFire', () => real.recordFire({ triggerId: notAUuid, source: 'manual', fireKey: 'manual-x' })],
    ];
    for (const [name, call] of calls) {
      const failure = await call().then(
        () => assert.fail(`${name} accepted a malformed id`),
        (err: unknown) => err,
      );
      assert.ok(failure instanceof ApplicationFailure, `${name}: ${String(failure)}`);
      assert.equal(failure.nonRetryable, true, name);
      assert.equal(failure.type, 'DatabaseError:22P02', name);
    }
  });

  it('classifies Postgres and JavaScript failures: data errors are deterministic, an unreachable database is not', async () => {
    const bad = await database.db.query(`SELECT $1::uuid`, ['not-a-uuid']).catch((err: unknown) => err);
    assert.ok(bad instanceof pg.DatabaseError && bad.code === '22P02');
    assert.equal(isDeterministicFailure(bad), true);
    const unique = await database.db.query(`INSERT INTO users (id, email, password_hash) SELECT id, email, 'x' FROM users LIMIT 1`).catch((err: unknown) => err);
    assert.equal(isDeterministicFailure(unique), true, String(unique));

    const unreachable = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:9/none', connectionTimeoutMillis: 1000 });
    const down = await unreachable.query('SELECT 1').catch((err: unknown) => err);
    await unreachable.end();
    assert.equal(isDeterministicFailure(down), false, String(down));
    const deadlock = Object.assign(new pg.DatabaseError('deadlock detected', 0, 'error'), { code: '40P01' });
    assert.equal(isDeterministicFailure(deadlock), false);
    assert.equal(isDeterministicFailure(new TypeError('x is undefined')), true);
    assert.equal(isDeterministicFailure(new Error('socket hang up')), false);
  });
  it('a replay whose batch fails for good stops there, and its progress reads failed, not running for ever', { timeout: 60_000 }, async () => {
    const { rows } = await database.db.query<{ account_id: string; agent_id: string }>(
      `WITH u AS (INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id),
            a AS (INSERT INTO accounts (owner_user_id, name, balance) SELECT id, 'acct', 0 FROM u RETURNING id),
            g AS (INSERT INTO agents (account_id, name, memory_config) SELECT id, 'replayed', '{}' FROM a RETURNING id, account_id),
            r AS (INSERT INTO runs (account_id, agent_id, status) SELECT account_id, id, 'failed' FROM g, generate_series(1, 3))
       SELECT account_id, id AS agent_id FROM g`,
      [`${randomUUID()}@example.com`],
    );
    const replays = createRunReplaysRepository(database.db);
    const replay = await replays.create(database.db, { accountId: rows[0]!.account_id, agentId: rows[0]!.agent_id, since: new Date(Date.now() - 60_000), until: new Date(Date.now() + 60_000), limit: 1000 });
    assert.equal(replay.count, 3);
    const batch = failing(() => ApplicationFailure.nonRetryable('the batch cannot be written'));
    const { result, failure } = await run({ replayRunBatch: batch.fn }, WORKFLOW_TYPES.replay, workflowIds.replay(replay.id), { replayId: replay.id });
    assert.equal(failure, null, 'the workflow ends, saying how');
    assert.equal(result, 'failed');
    assert.equal(batch.calls.n, 1, 'a non-retryable failure is not retried');
    const after = await replays.find(rows[0]!.account_id, rows[0]!.agent_id, replay.id);
    assert.deepEqual({ ...toReplay(after!), createdAt: undefined }, { id: replay.id, count: 3, started: 0, status: 'failed', createdAt: undefined });
  });
});
