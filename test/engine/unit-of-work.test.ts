import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { WriteUnit } from '../../db/write-unit';
import { createEngine, createTemporalClient, workflowIds, type Engine, type TemporalClient } from '../../engine';
import { suiteContext } from '../helpers/cleanup';
import { testConfig, testSecretBox } from '../helpers/config';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { testNamespace } from '../helpers/namespace';

/**
 * The engine's unit of work (engine/unit.ts): an event emitted in `engine.transaction` is written with
 * its fan-out, and the work it queued is handed to Temporal after the commit by the unit itself — never
 * when the unit rolls back, nor when the request's write unit around it does. No worker runs here: a
 * workflow that exists in Temporal was handed off by the unit's kick.
 */
describe('the unit of work', () => {
  const suite = suiteContext();
  let database: TestDatabase;
  let temporal: TemporalClient;
  let engine: Engine;
  let accountId: string;
  let kicks: number;

  before(async () => {
    database = await createTestDatabase(suite);
    const config = testConfig(database.url, { TEMPORAL_NAMESPACE: testNamespace(__filename) });
    temporal = createTemporalClient(config);
    // Without first attempts: every delivery's workflow start goes to Temporal at the kick.
    engine = createEngine({ db: database.db, config, secrets: testSecretBox, client: temporal.client, firstAttempts: false });
    const kick = engine.handOff.kick.bind(engine.handOff);
    engine.handOff.kick = (held) => {
      kicks++;
      kick(held);
    };
    const { rows } = await database.db.query<{ id: string }>(
      `WITH u AS (INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id),
            a AS (INSERT INTO accounts (owner_user_id, name, balance) SELECT id, 'acct', 0 FROM u RETURNING id),
            w AS (INSERT INTO webhooks (account_id, name, direction, url, events) SELECT id, 'out', 'outgoing', 'http://127.0.0.1:9/hook', ARRAY['agent.updated'] FROM a RETURNING account_id)
       SELECT account_id AS id FROM w`,
      [`${randomUUID()}@example.com`],
    );
    accountId = rows[0]!.id;
  });
  after(async () => {
    await engine?.handOff.idle();
    await temporal?.close();
  });

  /** The delivery of `eventId` and whether its workflow was handed to Temporal. */
  async function deliveryOf(eventId: string): Promise<{ delivery: boolean; started: boolean }> {
    const { rows } = await database.db.query<{ id: string }>(`SELECT id FROM deliveries WHERE event_id = $1`, [eventId]);
    if (rows.length === 0) return { delivery: false, started: false };
    await engine.handOff.idle();
    const started = await temporal.client.workflow.getHandle(workflowIds.delivery(rows[0]!.id, 0)).describe().then(() => true, () => false);
    return { delivery: true, started };
  }

  it('hands off what an emitted event queued after the commit, once', async () => {
    kicks = 0;
    const event = await engine.transaction((_tx, unit) => unit.emit({ accountId, type: 'agent.updated', data: {} }));
    assert.equal(event.fanOut.deliveries, 1);
    assert.equal(kicks, 1);
    assert.deepEqual(await deliveryOf(event.id), { delivery: true, started: true });
  });

  it('kicks nothing when the unit rolls back', async () => {
    kicks = 0;
    let eventId = '';
    await assert.rejects(
      engine.transaction(async (_tx, unit) => {
        eventId = (await unit.emit({ accountId, type: 'agent.updated', data: {} })).id;
        throw new Error('the change fails after its event');
      }),
      /the change fails after its event/,
    );
    assert.equal(kicks, 0);
    assert.deepEqual(await deliveryOf(eventId), { delivery: false, started: false });
    // The event itself is written in the unit's transaction (EventsRepository.insertEvent given `tx`), not beside it.
    const { rowCount } = await database.db.query(`SELECT 1 FROM events WHERE id = $1`, [eventId]);
    assert.equal(rowCount, 0, 'the event rolls back with its unit');
  });

  it('inside a request\'s write unit, hands off only once that unit commits', async () => {
    const emitIn = async (end: 'commit' | 'rollback') => {
      const unit = await WriteUnit.begin(database.db);
      const event = await unit.run(() => engine.transaction((_tx, u) => u.emit({ accountId, type: 'agent.updated', data: {} })));
      await new Promise((r) => setTimeout(r, 200)); // a hand-off made before the commit would have run by now
      await (end === 'commit' ? unit.commit() : unit.rollback());
      return deliveryOf(event.id);
    };
    assert.deepEqual(await emitIn('rollback'), { delivery: false, started: false });
    assert.deepEqual(await emitIn('commit'), { delivery: true, started: true });
  });

  it('kicks nothing for an event nothing listens for', async () => {
    kicks = 0;
    await engine.transaction((_tx, unit) => unit.emit({ accountId, type: 'agent.created', data: {} }));
    assert.equal(kicks, 0);
  });
});
