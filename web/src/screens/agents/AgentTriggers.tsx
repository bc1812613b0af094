import { Button, Group, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { client } from '../../api/client';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { EmptyState, QueryState } from '../../components/states';
import { useAccountKey } from '../../session/account';
import { Can } from '../../session/permissions';
import { TriggerFormDialog } from '../triggers/TriggerFormDialog';
import { TriggerTable } from '../triggers/TriggerTable';
import { useAgentId } from './AgentPage';

/** The agent's triggers (GET /api/agents/:id/triggers): each fire starts a run of this agent. */
export function AgentTriggers() {
  const agentId = useAgentId();
  const list = useCursorList(
    useAccountKey('triggers', 'agent', agentId),
    async (cursor) => pageOf(await client.GET('/api/agents/{agentId}/triggers', { params: { path: { agentId }, query: { cursor, limit: 50 } } })),
    { refetchInterval: 10_000 },
  );
  const [creating, create] = useDisclosure(false);
  const newTrigger = (
    <Can right="write">
      <Button onClick={create.open}>New trigger</Button>
    </Can>
  );
  return (
    <>
      <QueryState query={{ ...list, data: list.items }} loadingLabel="Loading triggers">
        {(triggers) =>
          triggers.length === 0 ? (
            <EmptyState
              title="No triggers on this agent"
              action={
                <Can right="write" otherwise={<Text c="dimmed">Your role here is read-only: an editor or admin can add one.</Text>}>
                  <Button variant="light" onClick={create.open}>
                    Add a trigger
                  </Button>
                </Can>
              }
            >
              A trigger starts this agent: on a cron schedule, when its hook URL is called, or on an event such as another agent finishing.
            </EmptyState>
          ) : (
            <>
              <Group justify="flex-end" mb="sm">
                {newTrigger}
              </Group>
              <TriggerTable triggers={triggers} scope="agent" />
              <LoadMore list={list} label="Load more triggers" />
            </>
          )
        }
      </QueryState>
      {creating && <TriggerFormDialog scope="agent" agentId={agentId} onClose={create.close} />}
    </>
  );
}
