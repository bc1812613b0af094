import { Anchor, Group, Paper, Stack, Text } from '@mantine/core';
import { Link } from 'react-router';
import { client } from '../../api/client';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { PageHeader } from '../../components/PageHeader';
import { EmptyState, QueryState } from '../../components/states';
import { useAccountId, useAccountKey } from '../../session/account';
import { callLabel, useToolName, type Approval } from './approval-api';

function PendingApproval({ approval }: { approval: Approval }) {
  const accountId = useAccountId();
  const toolName = useToolName(approval.toolId);
  const label = callLabel(approval, toolName);
  return (
    <Paper component="li" withBorder p="sm">
      <Group justify="space-between" wrap="wrap" gap="sm">
        <Stack gap={2}>
          <Anchor component={Link} to={`/w/${accountId}/runs/${approval.runId}`} fw={600}>
            {label}
          </Anchor>
          <Text size="xs" c="dimmed" ff="monospace" lineClamp={1} maw={560}>
            {JSON.stringify(approval.arguments)}
          </Text>
        </Stack>
        <Group gap="lg">
          <Text size="sm">
            Requested <DateTime value={approval.requestedAt} relative />
          </Text>
          <Text size="sm">
            Expires <DateTime value={approval.expiresAt} />
          </Text>
        </Group>
      </Group>
    </Paper>
  );
}

/**
 * The account's pending approvals, newest first (GET /api/approvals?status=pending): a list named
 * `Pending approvals`, each row the call the model asked for, linking to its run (where it is decided).
 */
export function ApprovalsList() {
  const list = useCursorList(
    useAccountKey('approvals', 'pending'),
    async (cursor) => pageOf(await client.GET('/api/approvals', { params: { query: { status: 'pending', cursor, limit: 50 } } })),
    { refetchInterval: 10_000 },
  );
  return (
    <>
      <PageHeader
        title="Approvals"
        description="Tool calls that wait for a person's yes (tools with requiresApproval), across every agent of this account. Open one's run to approve or reject it."
      />
      <QueryState query={{ ...list, data: list.items }} loadingLabel="Loading approvals">
        {(approvals) =>
          approvals.length === 0 ? (
            <EmptyState title="Nothing waits for a decision">When a model asks for a tool that requires approval, its run waits here until someone decides.</EmptyState>
          ) : (
            <>
              <Stack component="ul" aria-label="Pending approvals" gap="sm" p={0} m={0} style={{ listStyle: 'none' }}>
                {approvals.map((a) => (
                  <PendingApproval key={a.id} approval={a} />
                ))}
              </Stack>
              <LoadMore list={list} label="Load more approvals" />
            </>
          )
        }
      </QueryState>
    </>
  );
}
