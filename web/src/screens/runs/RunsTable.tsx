import { Anchor, Table, Text } from '@mantine/core';
import { useQueries } from '@tanstack/react-query';
import { Link } from 'react-router';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { DateTime } from '../../components/DateTime';
import { formatDuration } from '../../lib/dates';
import { useAccountId, useAccountKey } from '../../session/account';
import { RunStatusBadge, type Run } from './run-status';

/** The names of the agents of these runs (one read per agent, shared with the agent pages' cache). */
function useAgentNames(ids: string[]): Map<string, string> {
  const key = useAccountKey('agents');
  const results = useQueries({
    queries: ids.map((id) => ({
      queryKey: [...key, id],
      queryFn: async () => unwrap(await client.GET('/api/agents/{id}', { params: { path: { id } } })),
      retry: false,
      staleTime: 60_000,
    })),
  });
  return new Map(results.flatMap((r, i) => (r.data ? [[ids[i]!, r.data.name] as const] : [])));
}

/** Runs as rows: when, which agent, what started it, status, how long. */
export function RunsTable({ runs, showAgent = true }: { runs: Run[]; showAgent?: boolean }) {
  const accountId = useAccountId();
  const names = useAgentNames(showAgent ? [...new Set(runs.map((r) => r.agentId))] : []);
  return (
    <Table verticalSpacing="sm" highlightOnHover aria-label="Runs">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Run</Table.Th>
          {showAgent && <Table.Th>Agent</Table.Th>}
          <Table.Th>Status</Table.Th>
          <Table.Th>Started by</Table.Th>
          <Table.Th>Duration</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {runs.map((run) => (
          <Table.Tr key={run.id}>
            <Table.Td>
              <Anchor component={Link} to={`/w/${accountId}/runs/${run.id}`}>
                <DateTime value={run.createdAt} />
              </Anchor>
            </Table.Td>
            {showAgent && (
              <Table.Td>
                <Anchor component={Link} to={`/w/${accountId}/agents/${run.agentId}/runs`}>
                  {names.get(run.agentId) ?? 'an agent'}
                </Anchor>
              </Table.Td>
            )}
            <Table.Td>
              <RunStatusBadge status={run.status} />
            </Table.Td>
            <Table.Td>
              {run.triggerId ? (
                <Anchor component={Link} to={`/w/${accountId}/triggers/${run.triggerId}`}>
                  a trigger{run.chainDepth > 0 ? ` (chain depth ${run.chainDepth})` : ''}
                </Anchor>
              ) : (
                <Text size="sm">the API or console</Text>
              )}
            </Table.Td>
            <Table.Td>{run.startedAt ? formatDuration(new Date(run.finishedAt ?? Date.now()).getTime() - new Date(run.startedAt).getTime()) : '—'}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
