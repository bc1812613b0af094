import { useQuery } from '@tanstack/react-query';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { pageOf, useCursorList } from '../../components/cursor-list';
import { ResourceList } from '../../components/ResourceList';
import { useAccountKey } from '../../session/account';
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
  return (
    <ResourceList
      title="Triggers"
      description="Standalone triggers of the account: schedules, hooks and event listeners, each optionally starting an agent's run. An agent's own triggers are on its Triggers tab."
      noun={{ one: 'trigger', many: 'triggers' }}
      list={list}
      empty={{
        verb: 'Create',
        body: 'A trigger fires on a cron schedule, when its hook URL is called, or on an event (a run finishing, a webhook received). Link it to an agent to start a run on each fire.',
      }}
      createDialog={(close) => <TriggerFormDialog scope="user" onClose={close} />}
    >
      {(triggers) => <TriggerTable triggers={triggers} scope="user" agentNames={agentNames} />}
    </ResourceList>
  );
}
