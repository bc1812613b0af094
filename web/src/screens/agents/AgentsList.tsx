import { Anchor, Badge, Button, Group, Kbd, NativeSelect, Table, Text, TextInput } from '@mantine/core';
import { useDisclosure, useHotkeys } from '@mantine/hooks';
import { useRef } from 'react';
import { Link } from 'react-router';
import { client } from '../../api/client';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { PageHeader } from '../../components/PageHeader';
import { EmptyState, QueryState } from '../../components/states';
import { useListFilters } from '../../lib/use-debounced-search';
import { useAccountId, useAccountKey } from '../../session/account';
import { Can, useCan } from '../../session/permissions';
import { AGENT_STATUSES, STATUS_COLORS, type AgentStatus } from './agent-status';
import { CreateAgentDialog } from './CreateAgentDialog';
import { ImportAgentDialog } from './ImportAgentDialog';


/** The account's agents: found by text and status (kept in the URL), a page at a time; create and import. */
export function AgentsList() {
  const accountId = useAccountId();
  const filters = useListFilters(['status'] as const);
  const status = (AGENT_STATUSES as readonly string[]).includes(filters.values.status) ? (filters.values.status as AgentStatus) : undefined;
  const q = filters.q || undefined;
  const list = useCursorList(useAccountKey('agents', 'list', { q, status }), async (cursor) =>
    pageOf(await client.GET('/api/agents', { params: { query: { cursor, limit: 50, q, status } } })),
  );
  const [creating, create] = useDisclosure(false);
  const [importing, importer] = useDisclosure(false);
  const canWrite = useCan('write');
  const search = useRef<HTMLInputElement>(null);
  // Keyboard: "/" to search, "n" for a new agent (not while typing in a field).
  useHotkeys([
    ['/', () => search.current?.focus()],
    ['n', () => canWrite && create.open()],
  ]);
  const filtered = Boolean(q || status);

  return (
    <>
      <PageHeader
        title="Agents"
        description="An agent is a model with a prompt, tools and connectors; triggers and runs put it to work."
        actions={
          <Can right="write">
            <Button variant="default" onClick={importer.open}>
              Import
            </Button>
            <Button onClick={create.open} aria-keyshortcuts="n">
              New agent
            </Button>
          </Can>
        }
      />
      <Group mb="md" align="flex-end">
        <TextInput
          label="Search agents"
          placeholder="Name or description"
          value={filters.text}
          onChange={(e) => filters.setText(e.currentTarget.value)}
          w={280}
          type="search"
          ref={search}
          aria-keyshortcuts="/"
          rightSection={<Kbd size="xs">/</Kbd>}
        />
        <NativeSelect
          label="Filter by status"
          value={status ?? ''}
          onChange={(e) => filters.set('status', e.currentTarget.value)}
          data={[{ value: '', label: 'Any status' }, ...AGENT_STATUSES.map((s) => ({ value: s, label: s }))]}
        />
      </Group>
      <QueryState query={{ ...list, data: list.items }} loadingLabel="Loading agents">
        {(agents) =>
          agents.length === 0 ? (
            filtered ? (
              <EmptyState title="No agent matches">Try another text or status, or clear the filters.</EmptyState>
            ) : (
              <EmptyState
                title="No agents yet"
                action={
                  <Can right="write" otherwise={<Text c="dimmed">Your role here is read-only: an editor or admin can create one.</Text>}>
                    <Button variant="light" onClick={create.open}>
                      Create your first agent
                    </Button>
                  </Can>
                }
              >
                Create your first agent: give it a name, then a prompt, tools and a trigger. Templates are free; any other agent costs units from the balance.
              </EmptyState>
            )
          ) : (
            <>
              <Table highlightOnHover verticalSpacing="sm" aria-label="Agents">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>Status</Table.Th>
                    <Table.Th>Description</Table.Th>
                    <Table.Th>Updated</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {agents.map((agent) => (
                    <Table.Tr key={agent.id}>
                      <Table.Td>
                        <Anchor component={Link} to={`/w/${accountId}/agents/${agent.id}`} fw={500}>
                          {agent.name}
                        </Anchor>
                      </Table.Td>
                      <Table.Td>
                        <Badge variant="light" color={STATUS_COLORS[agent.status]}>
                          {agent.status}
                        </Badge>
                      </Table.Td>
                      <Table.Td>
                        <Text size="sm" c="dimmed" lineClamp={1}>
                          {agent.description || '—'}
                        </Text>
                      </Table.Td>
                      <Table.Td>
                        <DateTime value={agent.updatedAt} relative />
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
              <LoadMore list={list} label="Load more agents" />
            </>
          )
        }
      </QueryState>
      {creating && <CreateAgentDialog onClose={create.close} />}
      {importing && <ImportAgentDialog onClose={importer.close} />}
    </>
  );
}
