import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const root = path.resolve(__dirname, '../..');

/** README.md and every Markdown file under docs/, in the working tree. */
function documents(): Array<{ file: string; text: string }> {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(`${dir}/${e.name}`) : e.name.endsWith('.md') ? [`${dir}/${e.name}`] : [],
    );
  return ['README.md', ...walk('docs')].map((file) => ({ file, text: readFileSync(path.join(root, file), 'utf8') }));
}

/** The first segments of the tracked files (`api`, `db`, `package.json`, …): a path beginning elsewhere (`.data/`, `dist/`) is not the repository's. */
function topLevelEntries(): Set<string> {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  return new Set(files.map((f) => f.split('/')[0]!));
}

/**
 * The repository paths a document names in backticks: `lib/config.ts`, `db/migrations/`, `package.json`
 * (a `:line` suffix dropped). Spans with placeholders (`bench/<entry>`, `fire:<id>:*`), spaces or globs
 * are not paths, and neither are spans that do not begin with a top-level entry of the repository.
 */
function namedPaths(text: string, topLevel: Set<string>): string[] {
  return [...text.matchAll(/`([^`\n]+)`/g)]
    .map((m) => m[1]!.replace(/:\d+$/, ''))
    .filter((span) => /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*\/?$/.test(span))
    .filter((span) => topLevel.has(span.split('/')[0]!) && (span.includes('/') || /\.[a-z]+$/.test(span)));
}

/** Which of `paths` git ignores (build outputs such as `web/dist`), whether or not they exist. */
function ignoredByGit(paths: string[]): Set<string> {
  if (!paths.length) return new Set();
  try {
    // A path that does not exist is asked about as a folder too (`dist/` ignores folders only).
    const asked = paths.flatMap((p) => (p.endsWith('/') ? [p] : [p, `${p}/`]));
    const ignored = execFileSync('git', ['check-ignore', '--no-index', ...asked], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
    return new Set(ignored.map((p) => (paths.includes(p) ? p : p.replace(/\/$/, ''))));
  } catch (err) {
    // Exit code 1: none of them is ignored.
    if ((err as { status?: number }).status === 1) return new Set();
    throw err;
  }
}

/** Relative Markdown links (`[text](../README.md#anchor)`), resolved from the document's folder. */
function linkedFiles(file: string, text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith('#'))
    .map((target) => path.posix.normalize(path.posix.join(path.posix.dirname(file), target.split('#')[0]!)));
}

describe('the docs name only what the repository has', () => {
  const docs = documents();
  const topLevel = topLevelEntries();

  it('every repository path named in backticks in README.md and docs/ exists', () => {
    const named = docs.flatMap(({ file, text }) => namedPaths(text, topLevel).map((p) => ({ file, p })));
    assert.ok(named.length > 50, `the scan finds the paths the docs name (${named.length})`);
    const absent = named.filter(({ p }) => !existsSync(path.join(root, p)));
    // What a build makes (`web/dist`, `dist/`) is named as where it goes: ignored by git, it is no stale path.
    const built = ignoredByGit(absent.map(({ p }) => p));
    const missing = absent.filter(({ p }) => !built.has(p)).map(({ file, p }) => `${file}: \`${p}\``);
    assert.deepEqual(missing, [], 'a path the docs name is not in the tree: the code moved, so say where it is now');
  });

  it('every relative link in README.md and docs/ leads to a file of the repository', () => {
    const links = docs.flatMap(({ file, text }) => linkedFiles(file, text).map((target) => ({ file, target })));
    assert.ok(links.length > 20, `the scan finds the links (${links.length})`);
    const broken = links.filter(({ target }) => !existsSync(path.join(root, target))).map(({ file, target }) => `${file}: ${target}`);
    assert.deepEqual(broken, []);
  });

  it('the scan tells a path from other code spans', () => {
    const top = new Set(['lib', 'db', 'package.json']);
    assert.deepEqual(namedPaths('`lib/config.ts` `db/migrations/` `package.json` `lib/cron.ts:12`', top), ['lib/config.ts', 'db/migrations/', 'package.json', 'lib/cron.ts']);
    assert.deepEqual(namedPaths('`/api/agents` `bench/<entry>` `fire:<id>:x` `.data/bin/` `app.ts` `npm start` `lib`', top), []);
  });
});
