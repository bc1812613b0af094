import { Badge, Group, Tabs } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Outlet, useLocation, useNavigate, useParams } from 'react-router';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { PageHeader } from '../../components/PageHeader';
import { QueryState } from '../../components/states';
import { useAccountId, useAccountKey } from '../../session/account';
import { Can } from '../../session/permissions';
import { StartRunForm } from '../runs/StartRunForm';
import { AgentActions } from './AgentActions';
import { STATUS_COLORS } from './agent-status';

export const AGENT_TABS = [
  { value: 'overview', label: 'Overview' },
  { value: 'tools', label: 'Tools' },
  { value: 'connectors', label: 'Connectors' },
  { value: 'triggers', label: 'Triggers' },
  { value: 'runs', label: 'Runs' },
] as const;

export function useAgentId(): string {
  const { agentId } = useParams();
  if (!agentId) throw new Error('useAgentId outside an agent route');
  return agentId;
}

/** GET /api/agents/:id, shared by the agent's tabs. */
export function useAgent() {
  const agentId = useAgentId();
  return useQuery({
    queryKey: useAccountKey('agents', agentId),
    queryFn: async () => unwrap(await client.GET('/api/agents/{id}', { params: { path: { id: agentId } } })),
  });
}

/** An agent's page: its name and status, the form that runs it, and a tab (each with its own URL) per part of it. */
export function AgentPage() {
  const agent = useAgent();
  const accountId = useAccountId();
  const navigate = useNavigate();
  const location = useLocation();
  const tab = location.pathname.split('/')[5] ?? 'overview';
  return (
    <QueryState query={agent} loadingLabel="Loading the agent">
      {(data) => (
        <>
          <PageHeader
            crumbs={[{ label: 'All agents', to: `/w/${accountId}/agents` }]}
            title={
              <Group gap="sm">
                {data.name}
                <Badge variant="light" color={STATUS_COLORS[data.status]}>
                  {data.status}
                </Badge>
              </Group>
            }
            description={data.description || undefined}
            actions={<AgentActions agent={data} />}
          />
          {/* Run (with its input) is in the header, on every tab: a first user looked for it on Overview. */}
          <Can right="write">
            <StartRunForm agentId={data.id} disabledReason={data.status === 'paused' || data.status === 'template' ? `A ${data.status} agent does not run: activate it first.` : undefined} />
          </Can>
          <Tabs value={tab} onChange={(value) => value && navigate(`/w/${accountId}/agents/${data.id}/${value}`)} keepMounted={false}>
            <Tabs.List mb="md">
              {AGENT_TABS.map((t) => (
                <Tabs.Tab key={t.value} value={t.value}>
                  {t.label}
                </Tabs.Tab>
              ))}
            </Tabs.List>
            {/* Each tab is a URL of its own: the active tab's panel holds the route's screen. */}
            {AGENT_TABS.map((t) => (
              <Tabs.Panel key={t.value} value={t.value}>
                {t.value === tab && <Outlet />}
              </Tabs.Panel>
            ))}
          </Tabs>
        </>
      )}
    </QueryState>
  );
}
