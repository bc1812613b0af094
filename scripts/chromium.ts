import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's package: the browser tests drive it through playwright-core, which never downloads one. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Quiet headless Chromium as root: no sandbox (root has none), no GPU, no first-run, sync, updates or background requests. */
export const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

const hasCommand = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;

/**
 * Installs Debian's `chromium` with apt-get when it is absent (as root, or through passwordless sudo),
 * saying so. Returns why it cannot be had (no apt-get, no root, the install failed), or null once it is
 * there: the caller skips its test with that reason, and only then.
 */
export function ensureChromium(log: (line: string) => void = (line) => console.log(`# ${line}`)): string | null {
  if (existsSync(CHROMIUM_PATH)) return null;
  if (process.platform !== 'linux' || !hasCommand('apt-get')) return `no ${CHROMIUM_PATH}, and no apt-get to install Debian's chromium with`;
  const asRoot = process.getuid?.() === 0;
  if (!asRoot && spawnSync('sudo', ['-n', 'true']).status !== 0) return `no ${CHROMIUM_PATH}, and neither root nor passwordless sudo to install it`;
  const run = (args: string[]) =>
    execFileSync(asRoot ? args[0]! : 'sudo', asRoot ? args.slice(1) : args, {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 600_000,
    });
  log(`${CHROMIUM_PATH} is missing: installing Debian's chromium (apt-get update; apt-get install chromium), once`);
  try {
    run(['apt-get', 'update', '-qq']);
    run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'chromium']);
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? '').trim().split('\n').slice(-3).join(' | ');
    return `installing chromium with apt-get failed: ${stderr || (err as Error).message}`;
  }
  return existsSync(CHROMIUM_PATH) ? null : `apt-get installed chromium, but ${CHROMIUM_PATH} is not there`;
}

/** Headless Chromium, quiet: no first-run, sync, component updates or background requests. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--headless', ...CHROMIUM_ARGS], timeout: 60_000 });
}
