import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { EVENT_TYPES } from '../../lib/events';

const API = fs.readFileSync(path.join(__dirname, '../../docs/api.md'), 'utf8');

/** The text of the section headed `## <title>` of docs/api.md, up to the next `## `. */
function section(title: string): string {
  const start = API.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `docs/api.md has a section "## ${title}"`);
  const end = API.indexOf('\n## ', start + 1);
  return API.slice(start, end < 0 ? undefined : end);
}

/** The event types written in backticks in `text`. */
const typesIn = (text: string) => new Set([...text.matchAll(/`([a-z]+\.[a-z]+)`/g)].map((m) => m[1]!));

describe('the event catalog and its reference (docs/architecture.md § The unit of work: a new type is added to both)', () => {
  it('docs/api.md § Events has a row for every type of lib/events.ts, and none other', () => {
    const rows = section('Events')
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|')[1]!);
    const documented = new Set(rows.flatMap((cell) => [...typesIn(cell)]));
    assert.deepEqual([...documented].sort(), [...EVENT_TYPES].sort());
  });

  it('the webhooks\' "Catalog:" list names every type', () => {
    const catalog = /Catalog: ([^.]*(?:\.[a-z][^.]*)*)\.\n/.exec(section('Webhooks'))?.[1];
    assert.ok(catalog, 'docs/api.md § Webhooks has a "Catalog:" list');
    assert.deepEqual([...typesIn(catalog)].sort(), [...EVENT_TYPES].sort());
  });
});
