import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export { findFreePort as freePort } from '../../scripts/processes';

const ROOT = path.resolve(__dirname, '../..');

export interface RunningProcess {
  child: ChildProcess;
  output: () => string;
  /** Sends a signal and resolves with the exit code (or signal name). */
  stop: (signal?: NodeJS.Signals, timeoutMs?: number) => Promise<number | string>;
}

/** Starts one of our entry points as a real process (`node --import tsx <entry> [args]`). */
export function startProcess(entry: string, env: Record<string, string>, args: string[] = []): RunningProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return {
    child,
    output: () => output,
    stop: async (signal = 'SIGTERM', timeoutMs = 20_000) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Polls until fn resolves truthy, or throws after timeoutMs. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
}

/** Waits until the API process at `base` answers /api/health; on time-out the error carries the process's output. */
export async function waitForApi(base: string, api: RunningProcess): Promise<void> {
  await waitFor('the API to answer /api/health', async () => (await fetch(`${base}/api/health`)).ok, 60_000).catch((err) => {
    throw new Error(`${err}\n--- api output ---\n${api.output()}`);
  });
}
