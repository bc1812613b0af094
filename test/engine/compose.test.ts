import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { withTransaction } from '../../db/pool';
import { createEventsRepository } from '../../db/repositories/events';
import { composeEngine, type Engine } from '../../engine/compose';
import { createTemporalClient, type TemporalClient } from '../../engine/temporal/client';
import { suiteContext } from '../helpers/cleanup';
import { testConfig, testSecretBox } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';

/**
 * The engine of a process is composed once (engine/compose.ts), and which deliveries get their first
 * attempt in the writing process is decided there: `fanOut` holds a new delivery's workflow start for
 * that attempt (the one fan-out of every unit of work: engine/unit.ts, whose kick makes the attempt);
 * without first attempts it starts at once. Nothing is handed to Temporal here: the client is never used.
 */
describe('the composed engine', () => {
  const suite = suiteContext();
  let database: TestDatabase;
  let temporal: TemporalClient;
  let accountId: string;

  before(async () => {
    database = await createTestDatabase(suite);
    temporal = createTemporalClient(testConfig(database.url));
    const { rows } = await database.db.query<{ id: string }>(
      `WITH u AS (INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id),
            a AS (INSERT INTO accounts (owner_user_id, name, balance) SELECT id, 'acct', 0 FROM u RETURNING id),
            w AS (INSERT INTO webhooks (account_id, name, direction, url, events) SELECT id, 'out', 'outgoing', 'http://127.0.0.1:9/hook', ARRAY['*'] FROM a RETURNING account_id)
       SELECT account_id AS id FROM w`,
      [`${randomUUID()}@example.com`],
    );
    accountId = rows[0]!.id;
  });
  after(async () => {
    await temporal?.close();
  });

  const compose = (firstAttempts?: boolean): Engine =>
    composeEngine({ db: database.db, config: testConfig(database.url), secrets: testSecretBox, client: temporal.client, firstAttempts });

  /** One event fanned out by `fanOut` of `engine`: what it held for a first attempt, and whether its delivery's workflow start waits. */
  async function fanOutOne(fanOut: Engine['fanOut']) {
    return withTransaction(database.db, async (tx) => {
      const event = await createEventsRepository(database.db).insertEvent({ accountId, type: 'agent.updated', data: {} }, tx);
      const { held, deliveries } = await fanOut.fanOutEvent(tx, event);
      const { rows } = await tx.query<{ held: boolean }>(
        `SELECT available_at > now() AS held FROM outbox WHERE kind = 'workflow' AND payload->'args'->0->>'deliveryId' IN (SELECT id::text FROM deliveries WHERE event_id = $1)`,
        [event.id],
      );
      return { deliveries, held: held.length, startsHeld: rows.map((r) => r.held) };
    });
  }

  it('holds the deliveries of what this process writes for their first attempt here', async () => {
    const engine = compose();
    assert.deepEqual(await fanOutOne(engine.fanOut), { deliveries: 1, held: 1, startsHeld: [true] });
  });

  it('without first attempts in the process, every delivery workflow starts at once', async () => {
    const engine = compose(false);
    assert.deepEqual(await fanOutOne(engine.fanOut), { deliveries: 1, held: 0, startsHeld: [false] });
  });
});
