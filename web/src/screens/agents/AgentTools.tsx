import { client, type Schemas } from '../../api/client';
import { unwrap } from '../../api/errors';
import { pageOf } from '../../components/cursor-list';
import { ChildResources, type ChildApi, type ChildBody } from './ChildResources';
import { useAgentId } from './AgentPage';

type Tool = Schemas['Tool'];

const tools: ChildApi<Tool> = {
  noun: 'tool',
  createSchema: 'CreateTool',
  intro: 'Tools are what the agent can call while it runs: market data, or any HTTP endpoint of yours (custom). Header values are secrets: shown masked once saved.',
  list: async (agentId, cursor) => pageOf(await client.GET('/api/agents/{agentId}/tools', { params: { path: { agentId }, query: { cursor, limit: 50 } } })),
  create: async (agentId, body) => unwrap(await client.POST('/api/agents/{agentId}/tools', { params: { path: { agentId } }, body: body as Schemas['CreateTool'] })),
  update: async (id, body: ChildBody) => unwrap(await client.PATCH('/api/tools/{id}', { params: { path: { id } }, body: body as Schemas['UpdateTool'] })),
  remove: async (id) => unwrap(await client.DELETE('/api/tools/{id}', { params: { path: { id } } })),
  summary: (tool) => {
    const c = tool.configJson as Record<string, unknown>;
    if (tool.type === 'custom') return `${String(c.method ?? 'GET')} ${String(c.endpoint ?? '')}`;
    const lists = Object.entries(c).filter(([, v]) => Array.isArray(v)) as Array<[string, unknown[]]>;
    return lists.map(([k, v]) => `${k}: ${v.join(', ')}`).join(' · ') || '—';
  },
};

export function AgentTools() {
  return <ChildResources agentId={useAgentId()} api={tools} />;
}
