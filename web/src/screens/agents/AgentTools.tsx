import { useMemo } from 'react';
import { client, type Schemas } from '../../api/client';
import { unwrap } from '../../api/errors';
import { pageOf } from '../../components/cursor-list';
import { ChildResources, type ChildApi, type ChildBody } from './ChildResources';
import { useAccountId } from '../../session/account';
import { useAgentId } from './AgentPage';

type Tool = Schemas['Tool'];

const tools: ChildApi<Tool> = {
  noun: 'tool',
  createSchema: 'CreateTool',
  intro:
    'Tools are what the agent can call while it runs: market data, any HTTP endpoint of yours (custom), or the functions of an MCP server. ' +
    'Header values are secrets: shown masked once saved.',
  fieldLabels: { url: 'URL', functions: 'Functions (allow-list)' },
  typeLabels: { mcp: 'MCP server' },
  list: async (agentId, cursor) => pageOf(await client.GET('/api/agents/{agentId}/tools', { params: { path: { agentId }, query: { cursor, limit: 50 } } })),
  create: async (agentId, body) => unwrap(await client.POST('/api/agents/{agentId}/tools', { params: { path: { agentId } }, body: body as Schemas['CreateTool'] })),
  update: async (id, body: ChildBody) => unwrap(await client.PATCH('/api/tools/{id}', { params: { path: { id } }, body: body as Schemas['UpdateTool'] })),
  remove: async (id) => unwrap(await client.DELETE('/api/tools/{id}', { params: { path: { id } } })),
  summary: (tool) => {
    const c = tool.configJson as Record<string, unknown>;
    if (tool.type === 'custom') return `${String(c.method ?? 'GET')} ${String(c.endpoint ?? '')}`;
    if (tool.type === 'mcp') return `${String(c.url ?? '')}${Array.isArray(c.functions) ? ` · ${c.functions.join(', ')}` : ''}`;
    const lists = Object.entries(c).filter(([, v]) => Array.isArray(v)) as Array<[string, unknown[]]>;
    return lists.map(([k, v]) => `${k}: ${v.join(', ')}`).join(' · ') || '—';
  },
};

export function AgentTools() {
  const agentId = useAgentId();
  const accountId = useAccountId();
  // Each tool has its page: what it offers a model (its Functions).
  const api = useMemo<ChildApi<Tool>>(() => ({ ...tools, pageOf: (tool) => `/w/${accountId}/agents/${agentId}/tools/${tool.id}` }), [accountId, agentId]);
  return <ChildResources agentId={agentId} api={api} />;
}
