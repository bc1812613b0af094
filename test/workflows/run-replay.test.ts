import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { quietRuntime, workflowBundle } from '../helpers/engine';

const HISTORIES = path.join(__dirname, 'histories');

/** A history kept under histories/ (History.toObject: enums by name, longs and bytes as strings). */
function readHistory(file: string): temporal.api.history.v1.History {
  return temporal.api.history.v1.History.fromObject(JSON.parse(fs.readFileSync(path.join(HISTORIES, file), 'utf8')));
}

/** The ids of the patch markers a history holds. */
function patchIds(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    const id = marker.details?.['patch-data']?.payloads?.[0]?.data;
    return id ? [JSON.parse(Buffer.from(id).toString('utf8')).id as string] : [];
  });
}

/**
 * The run workflow's patch retirement (docs/architecture.md § Retiring workflow patches): runs recorded by
 * the workflow code of stage 1 (`patched('run-begun-by-first-step')`, every path a run can end by: see
 * the file names) replay on today's code, which deprecates the patch and has lost the paths from before
 * it. A run still open when today's workers are deployed is one of these.
 */
describe('runAgentWorkflow replays the histories of stage 1', () => {
  const files = fs.readdirSync(HISTORIES).filter((f) => f.startsWith('run-') && f.endsWith('.json'));

  before(() => quietRuntime());

  it('keeps a history of every way a run ends, each recorded under the patch', () => {
    assert.ok(files.length >= 10, `histories under ${HISTORIES}`);
    for (const file of files) assert.deepEqual(patchIds(readHistory(file)), ['run-begun-by-first-step'], `${file}: recorded by stage 1's code`);
  });

  it('replays every one of them on today\'s code', async () => {
    const histories = files.map((file) => ({ workflowId: file, history: readHistory(file) }));
    const failed: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) {
      replayed++;
      if (result.error) failed.push(`${result.workflowId}: ${result.error.message}`);
    }
    assert.equal(replayed, files.length);
    assert.deepEqual(failed, []);
  });
});
