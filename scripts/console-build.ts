import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
export const WEB_DIR = path.join(ROOT, 'web');
const BUILT_PAGE = path.join(WEB_DIR, 'dist', 'index.html');
/** What a build is made from: the sources, the page, the build's configuration, and the installed packages. */
const SOURCES = ['src', 'public', 'index.html', 'vite.config.mts', 'tsconfig.json'].map((p) => path.join(WEB_DIR, p)).concat(path.join(ROOT, 'package-lock.json'));

function newestChange(file: string): number {
  if (!fs.existsSync(file)) return 0;
  const stat = fs.statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return fs.readdirSync(file).reduce((newest, name) => Math.max(newest, newestChange(path.join(file, name))), stat.mtimeMs);
}

/** Why the console needs building (no build, or a source newer than it), or null when web/dist is current. */
export function consoleBuildNeeded(): string | null {
  if (!fs.existsSync(BUILT_PAGE)) return 'web/dist has no build';
  const built = fs.statSync(BUILT_PAGE).mtimeMs;
  const changed = SOURCES.find((source) => newestChange(source) > built);
  return changed ? `${path.relative(ROOT, changed)} changed since the last build` : null;
}

/** Builds the console into web/dist when it is missing or older than its sources (`npm run build:web`). */
export async function ensureConsoleBuilt(log: (line: string) => void): Promise<void> {
  const reason = consoleBuildNeeded();
  if (!reason) return;
  log(`building the console (${reason})`);
  const started = Date.now();
  const { execa } = await import('execa');
  try {
    await execa('npm', ['run', '--silent', 'build:web'], { cwd: ROOT, all: true });
  } catch (err) {
    const output = (err as { all?: string }).all ?? '';
    throw new Error(`Building the console failed (npm run build:web):\n${output.split('\n').slice(-20).join('\n')}`);
  }
  log(`built the console in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
