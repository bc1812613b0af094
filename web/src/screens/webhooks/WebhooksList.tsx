import { Anchor, Badge, Button, Group, Table, Text, Tooltip } from '@mantine/core';
import { useHotkeys } from '@mantine/hooks';
import { Link } from 'react-router';
import { client } from '../../api/client';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { PageHeader } from '../../components/PageHeader';
import { EmptyState, QueryState } from '../../components/states';
import { useAccountId, useAccountKey } from '../../session/account';
import { Can, useCan } from '../../session/permissions';
import { useCreateParam } from '../../lib/use-create-param';
import { WebhookFormDialog } from './WebhookFormDialog';

/** The account's webhooks (GET /api/webhooks): where events go out to, and where requests come in. */
export function WebhooksList() {
  const accountId = useAccountId();
  const list = useCursorList(useAccountKey('webhooks', 'list'), async (cursor) => pageOf(await client.GET('/api/webhooks', { params: { query: { cursor, limit: 50 } } })), {
    refetchInterval: 10_000,
  });
  const create = useCreateParam();
  const canWrite = useCan('write');
  // Keyboard: "n" opens the create form (not while typing in a field), as on the agents list.
  useHotkeys([['n', () => canWrite && create.open()]]);
  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Outgoing webhooks deliver the account's events to your endpoints, signed and retried; incoming ones turn requests to their URL into events."
        actions={
          <Can right="write">
            <Button onClick={create.open} aria-keyshortcuts="n">
              New webhook
            </Button>
          </Can>
        }
      />
      <QueryState query={{ ...list, data: list.items }} loadingLabel="Loading webhooks">
        {(webhooks) =>
          webhooks.length === 0 ? (
            <EmptyState
              title="No webhooks yet"
              action={
                <Can right="write" otherwise={<Text c="dimmed">Your role here is read-only: an editor or admin can add one.</Text>}>
                  <Button variant="light" onClick={create.open}>
                    Add a webhook
                  </Button>
                </Can>
              }
            >
              Add an outgoing webhook to have events (a run completed, a trigger fired…) sent to your endpoint, or an incoming one to receive requests as events that triggers can listen for.
            </EmptyState>
          ) : (
            <>
              <Table.ScrollContainer minWidth={800}>
                <Table highlightOnHover verticalSpacing="sm" aria-label="Webhooks">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Name</Table.Th>
                      <Table.Th>Direction</Table.Th>
                      <Table.Th>URL</Table.Th>
                      <Table.Th>Events</Table.Th>
                      <Table.Th>Count</Table.Th>
                      <Table.Th>Last</Table.Th>
                      <Table.Th>State</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {webhooks.map((w) => (
                      <Table.Tr key={w.id}>
                        <Table.Td>
                          <Anchor component={Link} to={`/w/${accountId}/webhooks/${w.id}`} fw={500}>
                            {w.name}
                          </Anchor>
                        </Table.Td>
                        <Table.Td>{w.direction}</Table.Td>
                        <Table.Td>
                          <Text size="sm" ff="monospace" lineClamp={1} style={{ wordBreak: 'break-all' }}>
                            {w.url}
                          </Text>
                        </Table.Td>
                        <Table.Td>
                          <Text size="sm" lineClamp={2}>
                            {w.events.join(', ')}
                          </Text>
                        </Table.Td>
                        <Table.Td>{w.triggerCount.toLocaleString()}</Table.Td>
                        <Table.Td>
                          <DateTime value={w.lastTriggered} relative />
                        </Table.Td>
                        <Table.Td>
                          <Group gap={4}>
                            {w.disabledReason ? (
                              <Tooltip label={w.disabledReason} multiline w={320}>
                                <Badge variant="light" color="red" tabIndex={0}>
                                  disabled by the platform
                                </Badge>
                              </Tooltip>
                            ) : (
                              <Badge variant="light" color={w.enabled ? 'teal' : 'gray'}>
                                {w.enabled ? 'enabled' : 'disabled'}
                              </Badge>
                            )}
                          </Group>
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
              <LoadMore list={list} label="Load more webhooks" />
            </>
          )
        }
      </QueryState>
      {create.opened && <WebhookFormDialog onClose={create.close} />}
    </>
  );
}
