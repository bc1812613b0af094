import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { WriteUnit } from '../../db/write-unit';
import { startEventMatching } from '../../engine/outbox/starts';
import { createHandOff } from '../../engine/outbox/handoff';
import { createTemporalClient } from '../../engine/temporal/client';
import { workflowIds } from '../../engine/temporal/names';
import { suiteContext } from '../helpers/cleanup';
import { testConfig } from '../helpers/config';
import { createTestDatabase } from '../helpers/database';
import { testNamespace } from '../helpers/namespace';

/** The write unit's hand-off (db/write-unit.ts, engine/outbox/handoff.ts) on a real database and the test Temporal server. */
describe('hand-off after a write unit', () => {
  const suite = suiteContext();
  let db: Db;
  let url: string;

  before(async () => {
    ({ db, url } = await createTestDatabase(suite, 3));
  });

  it('hands off outbox rows kicked inside a unit once it commits, and none of a unit rolled back', async () => {
    const temporal = createTemporalClient(testConfig(url, { TEMPORAL_NAMESPACE: testNamespace(__filename) }));
    const handOff = createHandOff({ db, client: temporal.client });
    /** Whether the dispatch queued and kicked inside a unit ended up started in Temporal. */
    const started = async (end: 'commit' | 'rollback') => {
      const eventId = randomUUID();
      const unit = await WriteUnit.begin(db);
      await unit.run(async () => {
        await startEventMatching(db, { id: eventId, account_id: randomUUID() });
        handOff.kick();
        await new Promise((r) => setTimeout(r, 300)); // a hand-off started by the kick itself would have run by now
      });
      await (end === 'commit' ? unit.commit() : unit.rollback());
      await handOff.idle();
      const handle = temporal.client.workflow.getHandle(workflowIds.event(eventId));
      return handle.describe().then(
        () => true,
        () => false,
      );
    };
    try {
      assert.equal(await started('rollback'), false);
      assert.equal(await started('commit'), true);
    } finally {
      await handOff.idle();
      await temporal.close();
    }
  });
});
