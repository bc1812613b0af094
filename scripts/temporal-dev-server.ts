import fs from 'node:fs';
import path from 'node:path';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import { TestWorkflowEnvironment, type LocalTestWorkflowEnvironmentOptions } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { parseDuration } from '../lib/durations';
import { SEARCH_ATTRIBUTES } from '../engine/temporal/names';
import { locate, TEMPORAL_CLI } from './temporal-binaries';

/**
 * The Temporal dev server (`temporal server start-dev`) for `npm start`, the test runner and the engine
 * bench, run by the SDK's `TestWorkflowEnvironment.createLocal` from the CLI that temporal-binaries.ts finds
 * or fetches. What createLocal does not do, and is done here: the namespace's retention (the dev server has
 * no flag for it); and a Temporal runtime without the SDK's own SIGINT/SIGTERM handlers, so that the dev
 * stack's ordered shutdown stays in charge. What it does differently from running the CLI ourselves: it
 * stops the server with SIGKILL (SQLite keeps what was committed), waits at most 5 s for it to serve (so a
 * start that takes longer is tried again), and writes the server's output straight to this process's
 * stdout/stderr.
 */

export interface TemporalDevServerOptions {
  /** Interface to bind. Default 127.0.0.1. */
  ip?: string;
  /** Frontend gRPC port. Default: a free one. */
  port?: number;
  /** Web UI port; none when unset. */
  uiPort?: number;
  /** Port of the server's Prometheus `/metrics`; a free one of the CLI's choosing when unset. */
  metricsPort?: number;
  /** SQLite file for persistence; omitted = in memory. */
  dbFilename?: string;
  /**
   * SQLite pragmas for that file (`name=value`). Default: `journal_mode=wal`, `synchronous=normal` (see
   * SQLITE_PRAGMAS); `[]` keeps SQLite's own (a rollback journal and a sync of the disk at every commit).
   */
  sqlitePragmas?: string[];
  namespace?: string;
  /** More namespaces to create at start. */
  extraNamespaces?: string[];
  /**
   * How long `namespace` keeps closed workflows (a duration such as `15m`, at least 1 minute); the dev server's
   * default is 24 h. Below an hour, the server's least local retention (`system.namespaceMinRetentionLocal`,
   * 1 h) is lowered to it.
   */
  retention?: string;
  /** More dynamic config values (`key=value`), e.g. for the engine bench's tuning runs. */
  dynamicConfig?: string[];
  /** Server log level. Default `warn`. */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** createLocal has no hook for the server's output lines: a handler given here only turns the server's logging off. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Progress messages (e.g. that the CLI is being fetched). Default: printed. */
  log?: (message: string) => void;
}

export interface TemporalDevServer {
  /** host:port of the frontend. */
  address: string;
  uiUrl: string | undefined;
  env: TestWorkflowEnvironment;
  stop(): Promise<void>;
}

const START_ATTEMPTS = 3;
/**
 * How long `npm start`'s namespace keeps closed workflows unless TEMPORAL_RETENTION says otherwise (the benches
 * that stand in for its stack use it too). Under a thousand per-minute triggers the SQLite file holds about
 * this much of their workflows, and a smaller file keeps the server quick: README, *The two commands*.
 */
export const DEV_STACK_RETENTION = '15m';
/** How much later than the namespace's retention a closed workflow may be deleted (see the server's flags below). */
const RETENTION_JITTER = '1m';

function installQuietRuntime(): void {
  try {
    Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by this process; its choice stands.
  }
}

/**
 * The SQLite file's journal is a write-ahead log, synced at checkpoints rather than at every commit
 * (SQLite's own default is a rollback journal and two syncs of the disk per commit). A process crash
 * (SIGKILL) loses nothing either way; a power cut can lose the last commits, not the file.
 */
export const SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

/**
 * Starts the dev server with this project's search attributes, a schedule start rate high enough for many
 * triggers firing in the same second, and task-queue fairness on (each account's tasks get their share).
 */
export async function startTemporalDevServer(options: TemporalDevServerOptions = {}): Promise<TemporalDevServer> {
  const log = options.log ?? ((message: string) => console.log(message));
  const cli = await locate(TEMPORAL_CLI, log);
  const ip = options.ip ?? '127.0.0.1';
  const namespace = options.namespace ?? 'default';
  if (options.dbFilename) fs.mkdirSync(path.dirname(path.resolve(options.dbFilename)), { recursive: true });
  installQuietRuntime();
  const config: LocalTestWorkflowEnvironmentOptions['server'] = {
    executable: { type: 'existing-path', path: cli },
    ip,
    port: options.port,
    ui: options.uiPort !== undefined,
    uiPort: options.uiPort,
    namespace,
    dbFilename: options.dbFilename && path.resolve(options.dbFilename),
    searchAttributes: SEARCH_ATTRIBUTES.map((name) => defineSearchAttributeKey(name, SearchAttributeType.KEYWORD)),
    extraArgs: [
      '--dynamic-config-value',
      'worker.schedulerNamespaceStartWorkflowRPS=1000',
      // Task-queue fairness across accounts (our fairness key, engine/temporal/names.ts: fairnessOf); off by default in 1.32.
      '--dynamic-config-value',
      'matching.enableFairness=true',
      // A closed workflow is deleted at the namespace's retention plus a random delay of up to this (Temporal's
      // default 30 minutes, to spread a cluster's deletes): 1 minute keeps `.data/` at about one retention's
      // worth of workflows, not up to 1.5.
      '--dynamic-config-value',
      `history.retentionTimerJitterDuration="${RETENTION_JITTER}"`,
      ...(options.retention !== undefined ? ['--dynamic-config-value', `system.namespaceMinRetentionLocal="${options.retention}"`] : []),
      ...(options.dbFilename ? (options.sqlitePragmas ?? SQLITE_PRAGMAS) : []).flatMap((pragma) => ['--sqlite-pragma', pragma]),
      ...(options.dynamicConfig ?? []).flatMap((value) => ['--dynamic-config-value', value]),
      ...(options.extraNamespaces ?? []).flatMap((name) => ['--namespace', name]),
      ...(options.metricsPort !== undefined ? ['--metrics-port', String(options.metricsPort)] : []),
    ],
    log: { format: 'pretty', level: options.onLine ? 'never' : (options.logLevel ?? 'warn') },
  };
  let env: TestWorkflowEnvironment | undefined;
  for (let attempt = 1; !env; attempt++) {
    env = await TestWorkflowEnvironment.createLocal({ server: config }).catch((err: Error) => {
      // createLocal gives the server 5 s to answer, which a busy machine can exceed; the next start is
      // usually quicker (the binary and the SQLite file are in the page cache by then).
      if (attempt < START_ATTEMPTS && /did not start within/.test(err.message)) {
        log(`the Temporal dev server did not answer within 5 s; starting it again (attempt ${attempt + 1} of ${START_ATTEMPTS})`);
        return undefined;
      }
      throw new Error(`The Temporal dev server (${cli}) did not start: ${err.message}`, { cause: err });
    });
  }
  try {
    if (options.retention !== undefined) {
      await env.connection.workflowService.updateNamespace({
        namespace,
        config: { workflowExecutionRetentionTtl: msToTs(parseDuration(options.retention)) },
      });
    }
  } catch (err) {
    await env.teardown();
    throw new Error(`Could not set the retention of namespace ${namespace}: ${(err as Error).message}`, { cause: err });
  }
  const uiHost = ip === '127.0.0.1' || ip === '0.0.0.0' ? 'localhost' : ip;
  return {
    address: env.address,
    uiUrl: options.uiPort === undefined ? undefined : `http://${uiHost}:${options.uiPort}`,
    env,
    stop: () => env.teardown(),
  };
}
