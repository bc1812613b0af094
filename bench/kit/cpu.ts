import fs from 'node:fs';

/**
 * CPU meters over /proc (Linux): what each process of a stack used, by pid, so a figure counts only what
 * serves the bench, whatever else runs on the machine. Where there is no /proc every reading is 0 (or NaN
 * for the whole machine).
 */

const TICKS_PER_SECOND = 100;

/** The fields of /proc/<pid>/stat after the command name; undefined when the process is gone. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) the process has used so far; 0 when it is gone. */
export function processCpuSeconds(pid: number): number {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND : 0;
}

/** Every pid on the machine. */
export function allPids(): number[] {
  return fs.existsSync('/proc') ? fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number) : [];
}

/** The process's command line, arguments joined by spaces ('' when it is gone). */
export function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

const parentOf = (pid: number) => Number(statFields(pid)?.[1]);

/** `root` and all its descendants. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const pid of allPids()) {
    const ppid = parentOf(pid);
    if (ppid) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const out: number[] = [];
  for (const queue = [root]; queue.length; ) {
    const pid = queue.pop()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** The Temporal dev server this process started (its child running the Temporal CLI). */
export function temporalServerPid(): number | undefined {
  return allPids().find((pid) => parentOf(pid) === process.pid && /temporal/.test(cmdline(pid)));
}

/** The Postgres backends serving `database` (their process title names it). */
export function postgresBackendPids(database: string): number[] {
  return allPids().filter((pid) => cmdline(pid).includes(` ${database} `));
}

/** CPU seconds the whole machine has spent busy so far, every core (/proc/stat); NaN without /proc. */
export function machineBusySeconds(): number {
  try {
    const [, ...fields] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
    const [user, nice, system, , , irq, softirq, steal] = fields.map(Number) as number[];
    return (user! + nice! + system! + irq! + softirq! + steal!) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/**
 * Starts a window: the result, called at its end, answers the CPU seconds used meanwhile by the processes
 * `pids()` lists then (read at both ends: backends and restarted processes come and go; one new since the
 * start counts from 0, one gone by the end is not counted).
 */
export function cpuMeter(pids: () => number[]): () => number {
  const before = new Map(pids().map((pid) => [pid, processCpuSeconds(pid)]));
  return () => pids().reduce((sum, pid) => sum + processCpuSeconds(pid) - (before.get(pid) ?? 0), 0);
}

/** A window over named groups of processes; its end answers "cores busy on average: worker 0.41, …". */
export function coresBusyMeter(groups: () => Record<string, number[]>): () => string {
  const names = Object.keys(groups());
  const meters = names.map((name) => cpuMeter(() => groups()[name] ?? []));
  const t0 = performance.now();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    return `cores busy on average: ${names.map((name, i) => `${name} ${(meters[i]!() / seconds).toFixed(2)}`).join(', ')}`;
  };
}
