import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { TEST_TIERS } from '../../scripts/test-tiers';
import { testNamespace } from '../helpers/namespace';

const testRoot = path.resolve(__dirname, '..');

/** Every test file under test/ (node's `.test.ts`, Playwright's `.spec.ts`), relative to test/. */
function testFiles(dir = testRoot): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(full);
    return /\.(test|spec)\.ts$/.test(e.name) ? [path.relative(testRoot, full)] : [];
  });
}

/**
 * A test file's name is unique across the tiers: it says what the file tests without its folder, and the
 * runner makes each file's Temporal namespace from it (test/helpers/namespace.ts), so two files of one name
 * would share a namespace and take each other's workflow tasks.
 */
describe('test files and tiers', () => {
  it('no two test files share a name, nor a Temporal namespace', () => {
    const byName = new Map<string, string[]>();
    for (const file of testFiles()) {
      const key = testNamespace(file.replace(/\.spec\.ts$/, '.test.ts'));
      byName.set(key, [...(byName.get(key) ?? []), file]);
    }
    const shared = [...byName.values()].filter((files) => files.length > 1);
    assert.deepEqual(shared, [], `test files sharing a name: ${shared.map((f) => f.join(' and ')).join('; ')}`);
    assert.ok(byName.size > 50, 'found the test files');
  });

  it("every folder holding node's test files is a tier `npm test` runs", () => {
    const folders = new Set(testFiles().filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f.split(path.sep)[0]}`));
    for (const folder of folders) assert.ok((TEST_TIERS as readonly string[]).includes(folder), `${folder} holds tests that npm test never runs (scripts/test-tiers.ts)`);
  });
});
