import { Button, Text } from '@mantine/core';
import { useHotkeys } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { PageHeader } from '../../components/PageHeader';
import { EmptyState, QueryState } from '../../components/states';
import { useAccountKey } from '../../session/account';
import { Can, useCan } from '../../session/permissions';
import { useCreateParam } from '../../lib/use-create-param';
import { TriggerFormDialog } from './TriggerFormDialog';
import { TriggerTable } from './TriggerTable';

/** The account's standalone triggers (GET /api/user-triggers), a page at a time; each agent's own are on its Triggers tab. */
export function TriggersList() {
  const list = useCursorList(useAccountKey('triggers', 'user'), async (cursor) => pageOf(await client.GET('/api/user-triggers', { params: { query: { cursor, limit: 50 } } })), {
    refetchInterval: 10_000,
  });
  const agents = useQuery({
    queryKey: useAccountKey('agents', 'picker'),
    queryFn: async () => unwrap(await client.GET('/api/agents', { params: { query: { limit: 200 } } })),
  });
  const agentNames = new Map((agents.data ?? []).map((a) => [a.id, a.name]));
  const create = useCreateParam();
  const canWrite = useCan('write');
  // Keyboard: "n" opens the create form (not while typing in a field), as on the agents list.
  useHotkeys([['n', () => canWrite && create.open()]]);
  return (
    <>
      <PageHeader
        title="Triggers"
        description="Standalone triggers of the account: schedules, hooks and event listeners, each optionally starting an agent's run. An agent's own triggers are on its Triggers tab."
        actions={
          <Can right="write">
            <Button onClick={create.open} aria-keyshortcuts="n">
              New trigger
            </Button>
          </Can>
        }
      />
      <QueryState query={{ ...list, data: list.items }} loadingLabel="Loading triggers">
        {(triggers) =>
          triggers.length === 0 ? (
            <EmptyState
              title="No triggers yet"
              action={
                <Can right="write" otherwise={<Text c="dimmed">Your role here is read-only: an editor or admin can create one.</Text>}>
                  <Button variant="light" onClick={create.open}>
                    Create a trigger
                  </Button>
                </Can>
              }
            >
              A trigger fires on a cron schedule, when its hook URL is called, or on an event (a run finishing, a webhook received). Link it to an agent to start a run on each fire.
            </EmptyState>
          ) : (
            <>
              <TriggerTable triggers={triggers} scope="user" agentNames={agentNames} />
              <LoadMore list={list} label="Load more triggers" />
            </>
          )
        }
      </QueryState>
      {create.opened && <TriggerFormDialog scope="user" onClose={create.close} />}
    </>
  );
}
