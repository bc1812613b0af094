import { useQuery } from '@tanstack/react-query';
import { client, type Schemas } from '../../api/client';
import { unwrap } from '../../api/errors';
import { nextCursor } from '../../lib/link-header';
import { useAccountKey } from '../../session/account';

export type Approval = Schemas['Approval'];

/** How many pending approvals the navigation counts at most (one page of the API); past it, "100+". */
const COUNT_PAGE = 100;

/**
 * The account's pending approvals for the navigation's count: one page of GET /api/approvals?status=pending,
 * read again every 15 s (and after a decision: its key is under `approvals`). One not decided by its expiry
 * is no longer counted, though the engine marks it expired only when its run wakes.
 */
export function usePendingApprovalCount(): { count: number; more: boolean } | undefined {
  const query = useQuery({
    queryKey: useAccountKey('approvals', 'pending-count'),
    queryFn: async () => {
      const result = await client.GET('/api/approvals', { params: { query: { status: 'pending', limit: COUNT_PAGE } } });
      const items = unwrap(result);
      return { items, more: Boolean(nextCursor(result.response.headers.get('Link'))) };
    },
    refetchInterval: 15_000,
  });
  if (!query.data) return undefined;
  const now = Date.now();
  return { count: query.data.items.filter((a) => Date.parse(a.expiresAt) > now).length, more: query.data.more };
}

/** A tool's name (GET /api/tools/:id, shared with the tool page's cache); undefined until read, or for a deleted tool. */
export function useToolName(toolId: string | null): string | undefined {
  const tool = useQuery({
    queryKey: useAccountKey('tools', toolId),
    enabled: Boolean(toolId),
    queryFn: async () => unwrap(await client.GET('/api/tools/{id}', { params: { path: { id: toolId! } } })),
    retry: false,
    staleTime: 60_000,
  });
  return tool.data?.name;
}

/** What an approval would call, as a person reads it: the tool, and an MCP tool's function. */
export function callLabel(approval: Approval, toolName: string | undefined): string {
  const tool = toolName ?? 'a tool';
  return approval.function ? `${tool} → ${approval.function}` : tool;
}
