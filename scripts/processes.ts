import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import readline from 'node:readline';

/**
 * Small process-supervision helpers for the local stack and the test runner.
 *
 * Every long-running child is started in its own process group (so a Ctrl-C at the terminal reaches only
 * the dev stack, which then stops the children in order) and is paired with a tiny `sh` watchdog that
 * kills the child's group as soon as the dev stack's end of a pipe closes — that is, when the dev stack
 * exits or dies in any way, even by SIGKILL. A normal stop releases the watchdog first.
 */

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SupervisedProcess {
  readonly name: string;
  readonly pid: number;
  /** Resolves when the process has exited, whoever stopped it. */
  readonly exited: Promise<ExitInfo>;
  /** Set once the process has exited. */
  readonly exitInfo: ExitInfo | undefined;
  /** The last output lines (stdout and stderr), for error messages. */
  recentOutput(): string[];
  /** Graceful stop: stop signal, wait up to `stopTimeoutMs`, then SIGKILL to the whole group. Idempotent. */
  stop(): Promise<ExitInfo>;
}

export interface SuperviseOptions {
  name: string;
  command: string;
  args: readonly string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
  /** Signal for a graceful stop. Default SIGTERM. */
  stopSignal?: NodeJS.Signals;
  /** Send the stop signal to the whole process group (default) or only to the process itself. */
  stopSignalToGroup?: boolean;
  /** How long a graceful stop may take before SIGKILL. Default 10 s. */
  stopTimeoutMs?: number;
  /** Called with every output line. Default: print it prefixed with `[name]`. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Stop passing output to `onLine` once `stop()` was called (for servers that are noisy on shutdown). */
  quietWhileStopping?: boolean;
}

const IS_WINDOWS = process.platform === 'win32';

/*
 * The watchdog: blocks reading its stdin. If the dev stack writes "release", it exits quietly; if the
 * pipe closes first (the dev stack is gone), it sends the stop signal, waits, then SIGKILLs the group.
 * $1 = pid (also the process-group id), $2 = target of the soft signal ("-pid" or "pid"),
 * $3 = soft signal name, $4 = how many 100 ms ticks to wait before SIGKILL.
 */
const WATCHDOG_SCRIPT = `
if IFS= read -r line && [ "$line" = release ]; then exit 0; fi
kill -s "$3" -- "$2" 2>/dev/null
n=0
while kill -0 -- "-$1" 2>/dev/null; do
  n=$((n+1))
  if [ "$n" -ge "$4" ]; then kill -s KILL -- "-$1" 2>/dev/null; exit 0; fi
  sleep 0.1
done
`;

function startWatchdog(pid: number, softTarget: string, signal: NodeJS.Signals, timeoutMs: number): ChildProcess | undefined {
  if (IS_WINDOWS) return undefined;
  const ticks = String(Math.max(1, Math.ceil(timeoutMs / 100)));
  const watchdog = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT, 'dev-stack-watchdog', String(pid), softTarget, signal.replace(/^SIG/, ''), ticks], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.on('error', () => {});
  watchdog.stdin?.on('error', () => {});
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return watchdog;
}

function releaseWatchdog(watchdog: ChildProcess | undefined): void {
  if (!watchdog?.stdin || watchdog.stdin.destroyed) return;
  watchdog.stdin.end('release\n');
}

function sendSignal(target: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false; // ESRCH: already gone
  }
}

function timeout(ms: number): Promise<'timeout'> {
  return new Promise((resolve) => setTimeout(() => resolve('timeout'), ms).unref());
}

/** Default printer for a child's output: `[name] line`, coloured when stdout is a terminal. */
export function prefixedPrinter(name: string, color = 0): (line: string, stream: 'stdout' | 'stderr') => void {
  const prefix = process.stdout.isTTY && color ? `\x1b[${color}m[${name}]\x1b[0m ` : `[${name}] `;
  return (line, stream) => {
    (stream === 'stderr' ? process.stderr : process.stdout).write(prefix + line + '\n');
  };
}

/**
 * Spawns a long-running child in its own process group with a watchdog tied to this process's lifetime.
 * Resolves once the OS has started it; rejects if it could not be started (e.g. ENOENT).
 */
export async function startSupervised(options: SuperviseOptions): Promise<SupervisedProcess> {
  const {
    name,
    stopSignal = 'SIGTERM',
    stopSignalToGroup = true,
    stopTimeoutMs = 10_000,
    onLine = prefixedPrinter(name),
    quietWhileStopping = false,
  } = options;

  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    uid: options.uid,
    gid: options.gid,
    detached: !IS_WINDOWS,
    stdio: ['ignore', 'pipe', 'pipe'],
  });

  let exitInfo: ExitInfo | undefined;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
  });

  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (err) => reject(new Error(`could not start ${name} (${options.command}): ${err.message}`)));
  });
  child.on('error', () => {}); // later errors (e.g. a failed kill) surface through `exited`
  const pid = child.pid as number;

  const watchdog = startWatchdog(pid, stopSignalToGroup ? `-${pid}` : String(pid), stopSignal, stopTimeoutMs);

  const recent: string[] = [];
  let stopping: Promise<ExitInfo> | undefined;
  const handleLine = (stream: 'stdout' | 'stderr') => (line: string) => {
    recent.push(line);
    if (recent.length > 50) recent.shift();
    if (quietWhileStopping && stopping) return;
    onLine(line, stream);
  };
  if (child.stdout) readline.createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', handleLine('stdout'));
  if (child.stderr) readline.createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', handleLine('stderr'));

  const groupTarget = IS_WINDOWS ? pid : -pid;

  const stop = (): Promise<ExitInfo> => {
    stopping ??= (async () => {
      if (!exitInfo) {
        sendSignal(stopSignalToGroup ? groupTarget : pid, stopSignal);
        if ((await Promise.race([exited, timeout(stopTimeoutMs)])) === 'timeout') {
          process.stderr.write(`[${name}] did not stop within ${Math.round(stopTimeoutMs / 1000)} s; killing it\n`);
          sendSignal(groupTarget, 'SIGKILL');
          await Promise.race([exited, timeout(5_000)]);
        }
      }
      // Anything the process left behind in its group (it is the group leader) goes too.
      if (!IS_WINDOWS) sendSignal(groupTarget, 'SIGKILL');
      releaseWatchdog(watchdog);
      return exitInfo ?? { code: null, signal: null };
    })();
    return stopping;
  };

  return {
    name,
    pid,
    exited,
    get exitInfo() {
      return exitInfo;
    },
    recentOutput: () => [...recent],
    stop,
  };
}

export function describeExit(info: ExitInfo): string {
  return info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
}

// ---------------------------------------------------------------------------------------------------
// Ports and waiting
// ---------------------------------------------------------------------------------------------------

/** True when something accepts TCP connections on host:port. */
export function canConnect(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** True when nothing listens on host:port and we could bind it. */
export async function isPortFree(host: string, port: number): Promise<boolean> {
  if (await canConnect(host, port, 500)) return false;
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port that was free on host a moment ago. */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ host, port: 0 }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function abortError(): Error {
  const err = new Error('Start-up was interrupted');
  err.name = 'AbortError';
  return err;
}

/** Sleeps, waking early (with an AbortError) if the signal fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Whether a process with this pid exists (EPERM: it exists but is not ours). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
