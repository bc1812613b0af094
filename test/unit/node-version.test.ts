import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

// docs/testing.md § Node versions: .nvmrc, engines, the README and .ci/run name the same Node.
const root = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

const nvmrc = read('.nvmrc').trim();
const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
const lockEngines = (JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node?: string } }> }).packages['']!.engines?.node;
const ciRun = read('.ci/run');
const ciVersion = /^NODE24_VERSION=(\d+)\.(\d+)\.(\d+)$/m.exec(ciRun);

/** The ranges of an `engines` string (`^20.19.0 || >=24.15.0`), each as its operator and version. */
function ranges(spec: string): Array<{ op: string; version: [number, number, number] }> {
  return spec.split('||').map((part) => {
    const m = /^\s*(\^|>=)(\d+)\.(\d+)\.(\d+)\s*$/.exec(part);
    assert.ok(m, `engines range "${part.trim()}" is ^x.y.z or >=x.y.z`);
    return { op: m[1]!, version: [Number(m[2]), Number(m[3]), Number(m[4])] };
  });
}

/** Whether `version` satisfies one of the `engines` ranges. */
function satisfies(spec: string, version: [number, number, number]): boolean {
  const atLeast = (a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;
  return ranges(spec).some(({ op, version: v }) => atLeast(version, v) >= 0 && (op === '>=' || version[0] === v[0]));
}

describe('the project names one Node', () => {
  it('.nvmrc names a major version', () => {
    assert.match(nvmrc, /^\d+$/);
  });

  it('.ci/run installs a pinned release of that major', () => {
    assert.ok(ciVersion, '.ci/run sets NODE24_VERSION=x.y.z');
    assert.equal(ciVersion[1], nvmrc);
    assert.match(ciRun, /npm install --prefix \.data\/node24 .*"node-linux-\$node_arch@\$NODE24_VERSION"/);
  });

  it('engines admits the pinned release, 22 and 20.19, and nothing older', () => {
    assert.ok(ciVersion);
    const pinned: [number, number, number] = [Number(ciVersion[1]), Number(ciVersion[2]), Number(ciVersion[3])];
    assert.ok(satisfies(engines, pinned), `engines "${engines}" admits ${pinned.join('.')}`);
    assert.ok(satisfies(engines, [22, 22, 2]), 'engines admits 22');
    assert.ok(satisfies(engines, [20, 19, 0]), 'engines admits 20.19');
    assert.ok(!satisfies(engines, [20, 18, 0]), 'engines refuses 20.18');
    assert.ok(!satisfies(engines, [18, 20, 0]), 'engines refuses 18');
    assert.equal(lockEngines, engines, 'package-lock.json carries the same engines');
  });

  it('the README names that Node', () => {
    assert.match(read('README.md'), new RegExp(`Node ${nvmrc}\\b`));
    assert.doesNotMatch(read('README.md'), /Node 20 and these two commands/);
  });
});
