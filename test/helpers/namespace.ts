import path from 'node:path';

/** The Temporal namespace the test runner created for a test file (its workers stay apart from other files'). */
export function testNamespace(testFile: string): string {
  return `t-${path.basename(testFile).replace(/\.test\.ts$/, '').replace(/[^a-zA-Z0-9-]/g, '-')}`;
}
