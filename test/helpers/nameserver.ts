import { startNameserver as start, type TestNameserver } from '../../bench/kit/nameserver';
import { onCleanup, type Cleanup } from './cleanup';

export type { Query, TestNameserver } from '../../bench/kit/nameserver';

/** The kit's loopback nameserver (bench/kit/nameserver.ts), closed when `t` ends. */
export async function startNameserver(t: Cleanup, answers: Record<string, string> = {}): Promise<TestNameserver> {
  const server = await start(answers);
  onCleanup(t, () => server.close());
  return server;
}
