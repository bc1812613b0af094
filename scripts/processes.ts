import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Process helpers for the local stack and the test runner, on `execa` (children) and `get-port` (ports).
 * Both are ESM-only and this project is CommonJS, so they are loaded with `import()`.
 */

export type LinePrinter = (line: string, stream: 'stdout' | 'stderr') => void;

/** `[name] `, coloured when stdout is a terminal. */
const linePrefix = (name: string, color: number) => (process.stdout.isTTY && color ? `\x1b[${color}m[${name}]\x1b[0m ` : `[${name}] `);

/**
 * A child's line as `[name] line`, with one prefix: a line that already starts with `[name] ` (the worker
 * prints its own, for when it runs alone in production) keeps that one, coloured like the others.
 */
export function prefixLine(name: string, color: number, line: string): string {
  const own = `[${name}] `;
  return linePrefix(name, color) + (line.startsWith(own) ? line.slice(own.length) : line);
}

/** Prints lines as `[name] line`. */
export function prefixedPrinter(name: string, color = 0): LinePrinter {
  const prefix = linePrefix(name, color);
  return (line, stream) => (stream === 'stderr' ? process.stderr : process.stdout).write(prefix + line + '\n');
}

/** A port that was free a moment ago. */
export async function findFreePort(host = '127.0.0.1'): Promise<number> {
  const { default: getPort } = await import('get-port');
  return getPort({ host });
}

/** `preferred` when it is free (on every local address, or on `host`), else any free port. */
export async function freePortPreferring(preferred: number, host?: string): Promise<number> {
  const { default: getPort } = await import('get-port');
  return getPort({ port: preferred, host });
}

/** True when something accepts TCP connections on host:port. */
export function canConnect(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: timeoutMs });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true)).once('timeout', () => done(false)).once('error', () => done(false));
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

const OWN_GROUP_ENV = 'DEV_STACK_OWN_PROCESS_GROUP';
/** Signals this close together are one Ctrl-C, delivered twice (see runInOwnProcessGroup). */
const SAME_SIGNAL_MS = 500;
/** After a second signal, how long the stack has to stop at once before its whole group is killed. */
const HARD_STOP_GRACE_MS = 3_000;

/**
 * A Ctrl-C at the terminal signals its whole foreground process group at once: Postgres, Temporal, the worker
 * and the API would all stop together, in no order. So the dev stack runs in a process group of its own: here
 * the launcher re-runs the current script detached, passes SIGINT/SIGTERM/SIGHUP on, and once that copy has
 * exited (in order, or killed hard) kills whatever is left in its group, then exits with its code. A second
 * signal (not an echo of the first: `npm` may pass a Ctrl-C on as well) is passed on too, and if the copy has
 * not exited 3 s later the whole group is killed: a stack that cannot stop never outlives a second Ctrl-C. In
 * the detached copy this returns at once, and `onLauncherGone` is called if the launcher dies (its stdin closes).
 */
export async function runInOwnProcessGroup(onLauncherGone: () => void): Promise<void> {
  if (process.env[OWN_GROUP_ENV]) {
    process.stdin.once('end', onLauncherGone).once('error', onLauncherGone).resume();
    return;
  }
  const { execa } = await import('execa');
  const stack = execa(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    env: { [OWN_GROUP_ENV]: '1' },
    detached: true,
    stdin: 'pipe',
    stdout: 'inherit',
    stderr: 'inherit',
    reject: false,
    cleanup: false,
    forceKillAfterDelay: false, // the stack's own shutdown gives each step its time limit
  });
  const killGroup = () => {
    try {
      process.kill(-stack.pid!, 'SIGKILL');
    } catch {
      // nothing left in the group
    }
  };
  let firstSignalAt: number | undefined;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      const now = Date.now();
      if (firstSignalAt === undefined) firstSignalAt = now;
      // One Ctrl-C at a terminal can reach us twice: from the terminal, and from `npm`, which passes it on to its script.
      else if (now - firstSignalAt < SAME_SIGNAL_MS) return;
      else setTimeout(killGroup, HARD_STOP_GRACE_MS).unref(); // a second one: the stack stops at once, or is killed
      stack.kill(signal);
    });
  }
  const result = await stack;
  killGroup();
  process.exit(result.exitCode ?? 1);
}

export interface SupervisedNode {
  /** From now on an exit is a crash to restart from, not a failed start-up. */
  markStarted(): void;
  /** SIGTERM, SIGKILL after `stopTimeoutMs`; no restart after it. */
  stop(): Promise<void>;
}

export interface SuperviseOptions {
  name: string;
  /** A TypeScript entry point, run as `node --import tsx <entry>`. */
  entry: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  color: number;
  log: (message: string) => void;
  /** An exit before `markStarted()`: start-up failed, restarting would fail again (a bad setting, a port in use). */
  onStartupExit: (message: string) => void;
  /** An exit after `markStarted()` (a crash), before the restart; the fuzzer counts it as a finding. */
  onCrash?: (message: string) => void;
  stopTimeoutMs?: number;
}

const FIRST_RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 30_000;
/** Up at least this long: the next crash is a new one, restarted after the first delay again. */
const STABLE_AFTER_MS = 60_000;

/**
 * Runs one of our processes under execa, printing its lines with a `[name]` prefix, and restarts it when it
 * exits on its own after start-up: after 1 s, doubling up to 30 s while it keeps crashing.
 */
export function superviseNode(options: SuperviseOptions): SupervisedNode {
  const prefixed = [
    function* (line: unknown) {
      yield prefixLine(options.name, options.color, String(line));
    },
    'inherit',
  ] as const;
  let child: { kill(): boolean } | undefined;
  let started = false;
  const stopping = new AbortController();

  const loop = (async () => {
    const { execaNode } = await import('execa');
    for (let delay = FIRST_RESTART_DELAY_MS; !stopping.signal.aborted; delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS)) {
      const since = Date.now();
      const running = execaNode(options.entry, [], {
        cwd: options.cwd,
        env: options.env,
        nodeOptions: ['--import', 'tsx'],
        stdin: 'ignore',
        stdout: prefixed,
        stderr: prefixed,
        buffer: false,
        reject: false,
        forceKillAfterDelay: options.stopTimeoutMs ?? 10_000,
      });
      child = running;
      const result = await running;
      if (stopping.signal.aborted) return;
      const how = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.exitCode}`;
      if (!started) return options.onStartupExit(`${options.name} ${how} during start-up`);
      if (Date.now() - since > STABLE_AFTER_MS) delay = FIRST_RESTART_DELAY_MS;
      options.onCrash?.(`${options.name} ${how}`);
      options.log(`${options.name} ${how}; restarting it in ${delay / 1000} s`);
      await sleep(delay, undefined, { signal: stopping.signal }).catch(() => {});
    }
  })();

  return {
    markStarted: () => void (started = true),
    stop: async () => {
      stopping.abort();
      child?.kill();
      await loop;
    },
  };
}
