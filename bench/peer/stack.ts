/** What `bench:peer` (bench/peer.ts) needs of each stack it runs the job on. */

export type StackName = 'ours' | 'n8n' | 'bullmq';

export interface Stack {
  name: StackName;
  hookUrl: string;
  /** Every process of the stack now (the CPU meters read them at both ends of a phase). */
  pids: () => number[];
  /** The stack's processes by part (the API, the worker, …), for CPU per message by part; `pids` when absent. */
  cpuGroups?: () => Record<string, number[]>;
  /** Its database, where it has one (BENCH_PG_STATEMENTS reads Postgres's own statistics there). */
  databaseUrl?: string;
  /** The processes whose SQL statements are counted (bench/kit/sql-counter.cjs), where the stack has any. */
  sqlPids?: () => number[];
  /** SIGKILL that process and start it again; resolves once it serves again. */
  kill: (which: string) => Promise<void>;
  stop: () => Promise<void>;
}
