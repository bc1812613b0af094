import fs from 'node:fs';
import path from 'node:path';

/**
 * Schemathesis, pinned, in a Python virtual environment of its own under `.data/fuzz-venv` (installed from PyPI
 * on first use, or when the pin changes). Python 3.10+ with `venv` is all it needs: `python3`, or `PYTHON`.
 */

export const SCHEMATHESIS_VERSION = '4.32.5';

const VENV_DIR = path.resolve(__dirname, '..', '..', '.data', 'fuzz-venv');
const bin = (name: string) => path.join(VENV_DIR, process.platform === 'win32' ? 'Scripts' : 'bin', name);

async function installedVersion(): Promise<string | undefined> {
  if (!fs.existsSync(bin('st'))) return undefined;
  const { execa } = await import('execa');
  const result = await execa(bin('st'), ['--version'], { reject: false });
  return /version (\S+)/.exec(result.stdout)?.[1];
}

/** The path of the `st` executable of the pinned version, installing it first when needed. */
export async function ensureSchemathesis(log: (message: string) => void): Promise<string> {
  const found = await installedVersion();
  if (found === SCHEMATHESIS_VERSION) return bin('st');
  const { execa } = await import('execa');
  const python = process.env.PYTHON || 'python3';
  const rel = path.relative(process.cwd(), VENV_DIR);
  if (!fs.existsSync(bin('python'))) {
    log(`creating a Python virtual environment in ${rel} (${python} -m venv)`);
    await execa(python, ['-m', 'venv', VENV_DIR], { stdio: 'inherit' }).catch((err: Error) => {
      throw new Error(`Could not create a Python virtual environment with ${python} (set PYTHON to a Python 3.10+ with venv): ${err.message}`);
    });
  }
  log(`${found ? `replacing schemathesis ${found}: ` : ''}installing schemathesis==${SCHEMATHESIS_VERSION} from PyPI into ${rel} (once; about 30 MB)`);
  await execa(bin('python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `schemathesis==${SCHEMATHESIS_VERSION}`], { stdio: 'inherit' });
  const now = await installedVersion();
  if (now !== SCHEMATHESIS_VERSION) throw new Error(`schemathesis ${SCHEMATHESIS_VERSION} did not install (st --version says ${now ?? 'nothing'})`);
  return bin('st');
}
