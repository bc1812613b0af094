import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
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

/**
 * What only the people, sessions and machines that wrote a document would know: the runs they were part of
 * ("stop 22", "helper-4", "an earlier session"), the task they were given ("the issue"), who reviews them,
 * and the paths of the machine they ran on. A document says what holds, and measurements name their
 * conditions (a 2-core machine, the load average) instead.
 */
const OUTSIDE_PHRASES: Array<[RegExp, string]> = [
  [/\bstop \d+\b/i, 'a numbered stop of some run'],
  [/\bhelper-\d+/i, 'a numbered helper'],
  [/\b(earlier|later|previous|next|this|that|another|one) session\b/i, 'a session that wrote it'],
  [/\bsession's machine\b/i, 'a session\'s machine'],
  [/\b(an? )?(earlier|previous|other) machines?\b/i, 'another machine than the reader\'s'],
  [/\bthis machine\b/i, 'the machine it was written on (name the conditions instead: "a 2-core machine")'],
  [/\bthe issue\b/i, 'the task it was written for'],
  [/\blead engineer\b|\bthe lead's\b/i, 'the people reviewing it'],
  [/\/(work|tmp)\//, 'a path of the machine it was written on'],
];

/** Where this repository's clones live on the machines it was written on (built from parts: not named here). */
const MACHINE_ROOT = ['', 'work', ''].join('/');

/** README.md and docs/, as they are in the working tree (a new document is checked before it is committed). */
function documents(): Array<{ file: string; text: string }> {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(`${dir}/${e.name}`) : e.name.endsWith('.md') ? [`${dir}/${e.name}`] : [],
    );
  return ['README.md', ...walk('docs')].map((file) => ({ file, text: readFileSync(path.join(root, file), 'utf8') }));
}

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

  it('the docs do not refer to the people, sessions or machines that wrote them', () => {
    const found = documents().flatMap(({ file, text }) =>
      text.split('\n').flatMap((line, i) => OUTSIDE_PHRASES.filter(([re]) => re.test(line)).map(([, what]) => `${file}:${i + 1} (${what}): ${line.trim()}`)),
    );
    assert.deepEqual(found, [], 'say what holds; keep what was tried in docs/adr/ (condensed) or in a commit message');
  });

  it('no tracked file names a path of the machine it was written on', () => {
    const found = files.flatMap(({ file, text }) => offendingLines(text, (line) => line.includes(MACHINE_ROOT)).map((line) => `${file}:${line}`));
    assert.deepEqual(found, [], 'paths relative to the repository (path.join(__dirname, …)) instead');
  });

  it('docs/ holds the architecture and the API contract, linked from the README', () => {
    const readme = files.find(({ file }) => file === 'README.md')!.text;
    for (const doc of ['docs/architecture.md', 'docs/api.md']) {
      assert.ok(files.some(({ file }) => file === doc), `${doc} is tracked`);
      assert.ok(readme.includes(`](${doc})`), `README links ${doc}`);
    }
  });
});
