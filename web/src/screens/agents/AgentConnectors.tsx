import { client, type Schemas } from '../../api/client';
import { unwrap } from '../../api/errors';
import { pageOf } from '../../components/cursor-list';
import { ChildResources, type ChildApi, type ChildBody } from './ChildResources';
import { useAgentId } from './AgentPage';

type Connector = Schemas['Connector'];

const connectors: ChildApi<Connector> = {
  noun: 'connector',
  createSchema: 'CreateConnector',
  intro: 'Connectors link the agent to a chat platform (Discord, Slack, Telegram). Bot tokens and signing secrets are entered once and shown masked afterwards.',
  list: async (agentId, cursor) => pageOf(await client.GET('/api/agents/{agentId}/connectors', { params: { path: { agentId }, query: { cursor, limit: 50 } } })),
  create: async (agentId, body) => unwrap(await client.POST('/api/agents/{agentId}/connectors', { params: { path: { agentId } }, body: body as Schemas['CreateConnector'] })),
  update: async (id, body: ChildBody) => unwrap(await client.PATCH('/api/connectors/{id}', { params: { path: { id } }, body: body as Schemas['UpdateConnector'] })),
  remove: async (id) => unwrap(await client.DELETE('/api/connectors/{id}', { params: { path: { id } } })),
  summary: (connector) =>
    Object.entries(connector.configJson)
      .map(([k, v]) => `${k}: ${String(v)}`)
      .join(' · ') || '—',
};

export function AgentConnectors() {
  return <ChildResources agentId={useAgentId()} api={connectors} />;
}
