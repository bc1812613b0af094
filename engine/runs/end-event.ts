import type { RunRow } from '../../db/repositories/runs';
import type { Unit } from '../unit';

/**
 * The one place a run's end is told: agent.completed (with its output) or agent.failed (with its error),
 * in the unit of work that ended it — the run activities' end (engine/runs/end.ts) and a cancel of a run
 * with no workflow (api/services/run-service.ts).
 */
export async function emitRunEnd(unit: Unit, row: Pick<RunRow, 'id' | 'account_id' | 'agent_id' | 'trigger_id' | 'status' | 'output' | 'error' | 'chain_depth'>): Promise<void> {
  const base = { agentId: row.agent_id, runId: row.id };
  const succeeded = row.status === 'succeeded';
  await unit.emit(
    {
      accountId: row.account_id,
      type: succeeded ? 'agent.completed' : 'agent.failed',
      data: succeeded ? { ...base, output: row.output, chainDepth: row.chain_depth } : { ...base, error: row.error, chainDepth: row.chain_depth },
      chainDepth: row.chain_depth,
    },
    { agentId: row.agent_id, triggerId: row.trigger_id },
  );
}
