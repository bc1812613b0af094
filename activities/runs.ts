import type { RunInput } from '../workflows/types';
import type { ActivityDeps } from './deps';

export function createRunActivities(_deps: ActivityDeps) {
  return {
    async executeRun(_input: RunInput): Promise<{ status: string }> {
      throw new Error('not implemented');
    },
  };
}
