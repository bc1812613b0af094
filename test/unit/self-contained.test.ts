import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const root = path.resolve(__dirname, '../..');

/**
 * Documents outside the repository, which a clone does not have. Built from parts, so that this file
 * does not name them itself.
 */
const OUTSIDE = [['..', 'shared'].join('/'), ['', 'work', 'shared'].join('/'), ...['DESIGN', 'SPEC', 'STYLE'].map((name) => `${name}.md`)];
/** A section of those notes, cited as if the reader had them ("DESIGN §" and a number). */
const SECTION = new RegExp(['DESIGN', '\\s*§\\s*\\d'].join(''));
/**
 * Applied migrations are checksummed by the migrator: changing a byte of one stops `npm run migrate` on every
 * database it was applied to. These keep their old section citations (docs/architecture.md, last paragraph);
 * any new migration is held to the rule.
 */
const APPLIED_MIGRATIONS_CITING_SECTIONS = new Set(
  ['1_foundation', '3_engine', '5_api_limits', '6_run_steps', '7_fire_limits', '8_retention'].map((name) => `db/migrations/${name}.sql`),
);

function trackedTextFiles(): Array<{ file: string; text: string }> {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  assert.ok(files.length > 50, `git ls-files listed only ${files.length} files`);
  return files
    .map((file) => ({ file, bytes: readFileSync(path.join(root, file)) }))
    .filter(({ bytes }) => !bytes.includes(0)) // binary
    .map(({ file, bytes }) => ({ file, text: bytes.toString('utf8') }));
}

function offendingLines(text: string, test: (line: string) => boolean): string[] {
  return text.split('\n').flatMap((line, i) => (test(line) ? [`${i + 1}: ${line.trim()}`] : []));
}

describe('the repository explains itself', () => {
  const files = trackedTextFiles();

  it('no tracked file refers to documents outside the repository', () => {
    const found = files.flatMap(({ file, text }) =>
      offendingLines(text, (line) => OUTSIDE.some((name) => line.includes(name))).map((line) => `${file}:${line}`),
    );
    assert.deepEqual(found, [], 'write the rule in place, or cite README / docs/architecture.md / docs/api.md');
  });

  it('no tracked file cites sections of design notes it does not have', () => {
    const found = files
      .filter(({ file }) => !APPLIED_MIGRATIONS_CITING_SECTIONS.has(file))
      .flatMap(({ file, text }) => offendingLines(text, (line) => SECTION.test(line)).map((line) => `${file}:${line}`));
    assert.deepEqual(found, [], 'cite README / docs/architecture.md / docs/api.md § <section> instead');
  });

  it('docs/ holds the architecture and the API contract, linked from the README', () => {
    const readme = files.find(({ file }) => file === 'README.md')!.text;
    for (const doc of ['docs/architecture.md', 'docs/api.md']) {
      assert.ok(files.some(({ file }) => file === doc), `${doc} is tracked`);
      assert.ok(readme.includes(`](${doc})`), `README links ${doc}`);
    }
  });
});
