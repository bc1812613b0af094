import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api } from '../helpers/api';
import { registerUser, startTestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

/**
 * POST /api/runs/:id/cancel while Temporal cannot be reached: whether the run has a workflow is then
 * unknown, so nothing is changed and the answer is a 503 with Retry-After (never a 500, never a hang).
 * The cancel itself, through the engine: test/engine/run-cancel.test.ts.
 */
describe('cancelling a run while Temporal is unreachable', () => {
  const suite = suiteContext();

  it('answers 503 with Retry-After and its message, within the deadline; the run is untouched', async () => {
    // Port 1 on loopback: nothing listens there.
    const { app, db } = await startTestApp(suite, { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    const owner = await registerUser(app);
    const agent = await api(app, owner).ok('POST', '/api/agents', { name: 'stuck' });
    const run = await api(app, owner).ok('POST', `/api/agents/${agent.id}/runs`, {});

    const started = performance.now();
    const res = await api(app, owner).post(`/api/runs/${run.id}/cancel`);
    const took = performance.now() - started;
    assert.ok(took < 15_000, `answered in ${Math.round(took)} ms`);
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.headers['retry-after'], '5');
    assert.equal(res.json().message, 'Temporal did not take the cancel in time: the run is unchanged; try again');
    const { rows } = await db.query(`SELECT status, error FROM runs WHERE id = $1`, [run.id]);
    assert.deepEqual(rows[0], { status: 'queued', error: null });
  });
});
