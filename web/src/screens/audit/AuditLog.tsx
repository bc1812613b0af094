import { Anchor, Code, Table, Text } from '@mantine/core';
import { Link } from 'react-router';
import { client } from '../../api/client';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { PageHeader } from '../../components/PageHeader';
import { EmptyState, QueryState } from '../../components/states';
import { useAccountId, useAccountKey } from '../../session/account';

/** Where a resource of the audit log has a page of its own (types whose URL the id alone gives). */
function resourceUrl(accountId: string, type: string, id: string | null): string | null {
  if (!id) return null;
  switch (type) {
    case 'agent':
      return `/w/${accountId}/agents/${id}/overview`;
    case 'webhook':
      return `/w/${accountId}/webhooks/${id}`;
    case 'run':
      return `/w/${accountId}/runs/${id}`;
    default:
      return null;
  }
}

/** Every write in the account, newest first, with who made it (GET /api/account/audit: owner and admins). */
export function AuditLog() {
  const accountId = useAccountId();
  const list = useCursorList(useAccountKey('audit'), async (cursor) => pageOf(await client.GET('/api/account/audit', { params: { query: { cursor, limit: 50 } } })));
  return (
    <>
      <PageHeader title="Audit log" description="Every change made in this account, newest first: who made it, what it was, and to what. Changes the platform made itself have no actor." />
      <QueryState query={{ ...list, data: list.items }} loadingLabel="Loading the audit log">
        {(entries) =>
          entries.length === 0 ? (
            <EmptyState title="Nothing recorded yet">Each create, update, fire, run, delete and team change in the account is recorded here as it happens.</EmptyState>
          ) : (
            <>
              <Table.ScrollContainer minWidth={700}>
                <Table verticalSpacing="xs" striped aria-label="Audit log">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>When</Table.Th>
                      <Table.Th>Who</Table.Th>
                      <Table.Th>Action</Table.Th>
                      <Table.Th>Resource</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {entries.map((entry) => {
                      const url = resourceUrl(accountId, entry.resourceType, entry.resourceId);
                      return (
                        <Table.Tr key={entry.id}>
                          <Table.Td>
                            <DateTime value={entry.createdAt} />
                          </Table.Td>
                          <Table.Td>{entry.actorEmail ?? <Text span c="dimmed" size="sm">the platform</Text>}</Table.Td>
                          <Table.Td>
                            <Code>{entry.action}</Code>
                          </Table.Td>
                          <Table.Td>
                            <Text size="sm" span>
                              {entry.resourceType}{' '}
                            </Text>
                            {url ? (
                              <Anchor component={Link} to={url} size="sm" ff="monospace">
                                {entry.resourceId!.slice(0, 8)}
                              </Anchor>
                            ) : (
                              <Text span size="sm" ff="monospace" c="dimmed">
                                {entry.resourceId?.slice(0, 8) ?? ''}
                              </Text>
                            )}
                          </Table.Td>
                        </Table.Tr>
                      );
                    })}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
              <LoadMore list={list} label="Load older entries" />
            </>
          )
        }
      </QueryState>
    </>
  );
}
