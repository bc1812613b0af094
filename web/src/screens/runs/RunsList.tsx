import { Anchor, Group, NativeSelect, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { PageHeader } from '../../components/PageHeader';
import { EmptyState, QueryState } from '../../components/states';
import { useAccountId, useAccountKey } from '../../session/account';
import { RUN_STATUSES, type RunStatus } from './run-status';
import { RunsTable } from './RunsTable';

/** Every run of the account, newest first; by status and by agent (both in the URL). Refreshes while runs are open. */
export function RunsList() {
  const accountId = useAccountId();
  const [params, setParams] = useSearchParams();
  const status = (RUN_STATUSES as readonly string[]).includes(params.get('status') ?? '') ? (params.get('status') as RunStatus) : undefined;
  const agentId = params.get('agentId') ?? undefined;
  const agentKey = useAccountKey('agents', agentId);
  const agent = useQuery({
    queryKey: agentKey,
    enabled: Boolean(agentId),
    queryFn: async () => unwrap(await client.GET('/api/agents/{id}', { params: { path: { id: agentId! } } })),
  });
  const list = useCursorList(
    useAccountKey('runs', 'list', { status, agentId }),
    async (cursor) => pageOf(await client.GET('/api/runs', { params: { query: { cursor, limit: 50, status, agentId } } })),
    { refetchInterval: 5_000 },
  );
  const set = (key: string, value: string | undefined) =>
    setParams((current) => {
      const next = new URLSearchParams(current);
      if (value) next.set(key, value);
      else next.delete(key);
      return next;
    });

  return (
    <>
      <PageHeader title="Runs" description="Every run of every agent of this account, newest first; a run's page shows its steps live." />
      <Group mb="md" align="flex-end">
        <NativeSelect
          label="Filter by status"
          value={status ?? ''}
          onChange={(e) => set('status', e.currentTarget.value || undefined)}
          data={[{ value: '', label: 'Any status' }, ...RUN_STATUSES.map((s) => ({ value: s, label: s }))]}
        />
        {agentId && (
          <Text size="sm" mb={8}>
            Runs of {agent.data ? <Anchor component={Link} to={`/w/${accountId}/agents/${agentId}`}>{agent.data.name}</Anchor> : 'one agent'} ·{' '}
            <Anchor component="button" type="button" onClick={() => set('agentId', undefined)}>
              all agents
            </Anchor>
          </Text>
        )}
      </Group>
      <QueryState query={{ ...list, data: list.items }} loadingLabel="Loading runs">
        {(runs) =>
          runs.length === 0 ? (
            <EmptyState title={status || agentId ? 'No run matches' : 'No runs yet'}>
              {status || agentId ? 'Try another status or agent.' : 'Open an agent and press Run, or give it a trigger: its runs appear here.'}
            </EmptyState>
          ) : (
            <>
              <RunsTable runs={runs} />
              <LoadMore list={list} label="Load more runs" />
            </>
          )
        }
      </QueryState>
    </>
  );
}
