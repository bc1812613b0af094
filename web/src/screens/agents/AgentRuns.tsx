import { Anchor, Stack, Title } from '@mantine/core';
import { Link } from 'react-router';
import { client } from '../../api/client';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { EmptyState, QueryState } from '../../components/states';
import { useAccountId, useAccountKey } from '../../session/account';
import { RunsTable } from '../runs/RunsTable';
import { useAgent, useAgentId } from './AgentPage';

/** The agent's runs, newest first (the header above the tabs starts one). */
export function AgentRuns() {
  const accountId = useAccountId();
  const agentId = useAgentId();
  const agent = useAgent().data;
  const list = useCursorList(
    useAccountKey('agents', agentId, 'runs'),
    async (cursor) => pageOf(await client.GET('/api/agents/{id}/runs', { params: { path: { id: agentId }, query: { cursor, limit: 50 } } })),
    { refetchInterval: 5_000 },
  );
  const blocked = agent && (agent.status === 'paused' || agent.status === 'template') ? `A ${agent.status} agent does not run: activate it first.` : undefined;
  return (
    <Stack>
      <Title order={2} size="h4">
        Runs of this agent
      </Title>
      <QueryState query={{ ...list, data: list.items }} loadingLabel="Loading runs">
        {(runs) =>
          runs.length === 0 ? (
            <EmptyState title="No runs yet">{blocked ?? 'Press Run to start one; a trigger of this agent starts them too.'}</EmptyState>
          ) : (
            <>
              <RunsTable runs={runs} showAgent={false} />
              <LoadMore list={list} label="Load more runs" />
              <Anchor component={Link} to={`/w/${accountId}/runs?agentId=${agentId}`} size="sm">
                These runs in the runs list
              </Anchor>
            </>
          )
        }
      </QueryState>
    </Stack>
  );
}
