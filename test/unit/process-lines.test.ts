import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { prefixLine } from '../../scripts/processes';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');
const processes = path.join(root, 'scripts/processes.ts');

describe('the lines of a supervised process (npm start)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'process-lines-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prefixes a line once, also when the process printed its own prefix', () => {
    assert.equal(prefixLine('worker', 0, 'polling task queue'), '[worker] polling task queue');
    assert.equal(prefixLine('worker', 0, '[worker] polling task queue'), '[worker] polling task queue');
    // Another name's prefix, or one not at the start, is part of the line.
    assert.equal(prefixLine('api', 0, '[worker] x'), '[api] [worker] x');
    assert.equal(prefixLine('worker', 0, 'said [worker] x'), '[worker] said [worker] x');
  });

  it('prints each line of a real child with one prefix', async () => {
    const child = path.join(dir, 'child.ts');
    writeFileSync(child, `console.log('[fake] tagged by itself'); console.log('plain'); console.error('[fake] on stderr');\n`);
    const driver = path.join(dir, 'driver.ts');
    writeFileSync(
      driver,
      `import { superviseNode } from ${JSON.stringify(processes)};\n` +
        `superviseNode({ name: 'fake', entry: ${JSON.stringify(child)}, cwd: ${JSON.stringify(root)}, env: process.env, color: 0,\n` +
        `  log: () => {}, onStartupExit: () => {} }); // the child exits at once: the driver ends with it\n`,
    );
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', driver], { cwd: root });
    assert.deepEqual(stdout.trimEnd().split('\n'), ['[fake] tagged by itself', '[fake] plain']);
    assert.deepEqual(stderr.trimEnd().split('\n'), ['[fake] on stderr']);
  });
});
