import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const root = path.resolve(__dirname, '../..');

/**
 * Files whose citations are read: the tracked text files, except migrations (checksummed once applied, so
 * they keep the names of their time: docs/architecture.md § Reading the code), the lock file, and this file (its examples).
 */
function citingFiles(): string[] {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  return files.filter(
    (f) => (/\.(ts|tsx|mts|mjs|cjs|js|md|sql|json|ya?ml|sh)$/.test(f) || f === '.ci/run') && !f.startsWith('db/migrations/') && f !== 'package-lock.json' && f !== 'test/unit/doc-citations.test.ts' && existsSync(path.join(root, f)),
  );
}

/** A Markdown file's headings (any level), their text as written, inline code marks dropped. */
function headings(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (m) out.push(m[1]!.replace(/`/g, ''));
  }
  return out;
}

export interface Citation {
  at: string; // file:line of the citation
  file: string; // the cited Markdown file, from the repository root
  text: string; // what follows the §, the cited heading at its start
}

/** Resolves a cited name (`docs/api.md`, `api.md` from docs/, `README`) to a repository path, or null. */
function resolveCited(name: string, citing: string): string | null {
  const file = name === 'README' ? 'README.md' : name;
  const candidates = [path.posix.join(path.posix.dirname(citing), file), file, `docs/${file}`];
  return candidates.find((c) => existsSync(path.join(root, c))) ?? null;
}

/** The line with comment markers and string-concatenation seams removed, so a heading wrapped over two lines reads whole. */
function plain(line: string): string {
  return line
    .replace(/^\s*(\/\/+|\/?\*+\/?|--|#)?\s*/, '')
    .replace(/^['"`]/, '')
    .replace(/['"`]\s*\+?\s*$/, '');
}

/**
 * Every citation of a doc file's heading in `text` (`docs/api.md § Events`, `README § The two commands`); a bare `§ <heading>` that follows one on the
 * same line (`docs/api.md § Rate limits and § Events`) cites the same file. Other `§` (RFC 9110 § 10.2.3,
 * a law's § 8) are not documents of the repository and are skipped.
 */
export function citations(citing: string, text: string): Citation[] {
  const lines = text.split('\n');
  const out: Citation[] = [];
  lines.forEach((line, i) => {
    let current: string | null = null;
    for (const m of line.matchAll(/(?:([A-Za-z0-9_./-]+\.md|\bREADME)\s*)?§\s*/g)) {
      const name = m[1];
      if (name) current = name;
      // A bare § continues the line's citation only in a list of them (`§ A and § B`, `§ A, § B`).
      else if (!current || !/(,|;|\band|\bor)\s*$/.test(line.slice(0, m.index))) continue;
      const file = resolveCited(current, citing);
      const rest = line.slice(m.index + m[0].length) + ' ' + plain(lines[i + 1] ?? '');
      const cited = rest.replace(/\s+/g, ' ').trim();
      // A placeholder (`docs/api.md § <section>`) in a message cites nothing.
      if (!cited.startsWith('<')) out.push({ at: `${citing}:${i + 1}`, file: file ?? current, text: cited });
    }
  });
  return out;
}

/** Whether `text` begins with one of `heads`, ending there at a word boundary. */
export function citesHeading(text: string, heads: string[]): boolean {
  const t = text.replace(/`/g, '');
  return heads.some((h) => t.startsWith(h) && !/[A-Za-z0-9]/.test(t.charAt(h.length)));
}

describe('every cited doc heading (`<file>.md § <heading>`) exists', () => {
  it('in code comments, OpenAPI text, schedule notes and the docs', () => {
    const cache = new Map<string, string[] | null>();
    const headsOf = (file: string) => {
      if (!cache.has(file)) cache.set(file, existsSync(path.join(root, file)) ? headings(readFileSync(path.join(root, file), 'utf8')) : null);
      return cache.get(file)!;
    };
    const all = citingFiles().flatMap((f) => citations(f, readFileSync(path.join(root, f), 'utf8')));
    assert.ok(all.length > 100, `found ${all.length} citations`);
    const broken = all.filter((c) => {
      const heads = headsOf(c.file);
      return !heads || !citesHeading(c.text, heads);
    });
    const list = broken.map((c) => `${c.at}: ${c.file} § ${c.text.slice(0, 60)}`).join('\n');
    assert.equal(broken.length, 0, `${broken.length} citations name no heading of their file:\n${list}`);
  });

  it('reads a citation whole and tells a heading from a prefix of one', () => {
    const found = citations('api/x.ts', '// see docs/api.md § Rate limits and § Events\n// README § The two\n// commands: more\nRFC 9110 § 10.2.3 and a law\'s § 8');
    assert.deepEqual(found.map((c) => c.file), ['docs/api.md', 'docs/api.md', 'README.md']);
    assert.ok(found[0]!.text.startsWith('Rate limits and'));
    assert.ok(found[1]!.text.startsWith('Events '));
    assert.ok(found[2]!.text.startsWith('The two commands: more'), 'a heading wrapped over two comment lines reads whole');
    assert.ok(citesHeading('The two commands: more', ['The two commands']));
    assert.ok(!citesHeading('The two commandments', ['The two commands']));
    assert.ok(!citesHeading('Limits', ['Limits and fairness']));
  });
});
