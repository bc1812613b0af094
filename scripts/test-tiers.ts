/**
 * The folders of node's test files, in the order `npm test` runs them (docs/testing.md § Tiers):
 * pure logic, the database, the API in-process, workflows, the engine in one process, the real processes.
 */
export const TEST_TIERS = ['test/unit', 'test/db', 'test/api', 'test/workflows', 'test/engine', 'test/e2e'] as const;
