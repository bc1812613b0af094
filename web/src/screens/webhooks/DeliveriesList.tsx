import { Badge, Button, Code, Group, Stack, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { pageOf, useCursorList } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { PagedTimeline } from '../../components/PagedTimeline';
import { QueryState } from '../../components/states';
import { TimelineEntry, TimelineItems } from '../../components/Timeline';
import { TemporalLink } from '../../components/TemporalLink';
import { formatDuration } from '../../lib/dates';
import { useWrite } from '../../lib/mutations';
import { workflowIds } from '../../lib/temporal';
import { useAccountKey } from '../../session/account';
import { Can } from '../../session/permissions';
import { DELIVERY_STATUS_COLOR, type Delivery } from './webhook-api';

/**
 * The webhook's delivery log, newest first, refreshed every 2 s so deliveries and their outcomes appear
 * without reloading: each delivery's event, status, attempts, last answer and next attempt; opened, every
 * attempt (status code or error, duration, the first 1 KiB of the receiver's text answer); a failed one has Retry. `openId` opens one (a shared link).
 */
export function DeliveriesList({ webhookId, openId }: { webhookId: string; openId?: string | null }) {
  const list = useCursorList(
    useAccountKey('webhooks', webhookId, 'deliveries'),
    async (cursor) => pageOf(await client.GET('/api/webhooks/{id}/deliveries', { params: { path: { id: webhookId }, query: { cursor, limit: 25 } } })),
    { refetchInterval: 2_000 },
  );
  // A link to one delivery (from a trigger's timeline) that is not on the pages loaded: shown above them.
  const linked = useQuery({
    queryKey: useAccountKey('webhooks', webhookId, 'deliveries', openId),
    queryFn: async () => unwrap(await client.GET('/api/webhooks/{id}/deliveries/{deliveryId}', { params: { path: { id: webhookId, deliveryId: openId! } } })),
    enabled: Boolean(openId) && list.items !== undefined && !list.items.some((d) => d.id === openId),
    refetchInterval: 3_000,
  });
  return (
    <PagedTimeline
      list={list}
      noun="Deliveries"
      empty="Each event the webhook subscribes to becomes a delivery here. Send test delivers a webhook.test event now."
      before={(deliveries) =>
        linked.data &&
        !deliveries.some((d) => d.id === openId) && (
          <TimelineItems label="Linked delivery" mb="md">
            <DeliveryItem webhookId={webhookId} delivery={linked.data} initiallyOpen />
          </TimelineItems>
        )
      }
    >
      {(delivery) => <DeliveryItem key={delivery.id} webhookId={webhookId} delivery={delivery} initiallyOpen={delivery.id === openId} />}
    </PagedTimeline>
  );
}

function DeliveryItem({ webhookId, delivery, initiallyOpen }: { webhookId: string; delivery: Delivery; initiallyOpen: boolean }) {
  const retry = useWrite(
    async () => unwrap(await client.POST('/api/webhooks/{id}/deliveries/{deliveryId}/retry', { params: { path: { id: webhookId, deliveryId: delivery.id } } })),
    { invalidates: [useAccountKey('webhooks', webhookId)], success: 'Retrying: one more attempt now' },
  );
  const created = new Date(delivery.createdAt).toLocaleString();
  return (
    <TimelineEntry
      summary={
        <>
          <Badge variant="light" color={DELIVERY_STATUS_COLOR[delivery.status]}>
            {delivery.status}
          </Badge>
          <Text size="sm" ff="monospace">
            {delivery.eventType}
          </Text>
          <DateTime value={delivery.createdAt} />
          <Text size="sm" c="dimmed">
            {delivery.attempts} attempt{delivery.attempts === 1 ? '' : 's'}
            {delivery.lastStatusCode !== null && `, last answered ${delivery.lastStatusCode}`}
            {delivery.lastStatusCode === null && delivery.lastError && `, last: ${delivery.lastError}`}
          </Text>
          {delivery.nextAttemptAt && (
            <Text size="sm" c="dimmed">
              next attempt <DateTime value={delivery.nextAttemptAt} relative />
            </Text>
          )}
        </>
      }
      actions={
        delivery.status === 'failed' && (
          <Can right="write">
            <Button size="compact-sm" variant="light" onClick={() => retry.mutate(undefined)} loading={retry.isPending}>
              Retry
            </Button>
          </Can>
        )
      }
      note={<ApiErrorAlert error={retry.error} />}
      opens={{ closed: 'Attempts', open: 'Hide attempts' }}
      toggleLabel={(open) => `${open ? 'Hide' : 'Show'} attempts of the delivery of ${created}`}
      initiallyOpen={initiallyOpen}
      details={() => <Attempts webhookId={webhookId} deliveryId={delivery.id} />}
    />
  );
}

/** Every attempt of one delivery (GET …/deliveries/:id), oldest first, with what the receiver answered; manual retries as later generations. */
function Attempts({ webhookId, deliveryId }: { webhookId: string; deliveryId: string }) {
  const detail = useQuery({
    queryKey: useAccountKey('webhooks', webhookId, 'deliveries', deliveryId),
    queryFn: async () => unwrap(await client.GET('/api/webhooks/{id}/deliveries/{deliveryId}', { params: { path: { id: webhookId, deliveryId } } })),
    refetchInterval: 3_000,
  });
  return (
    <Stack gap="xs" mt="sm">
      <QueryState query={detail} loadingLabel="Loading attempts">
        {(d) =>
          d.attemptsDetail.length === 0 ? (
            <Text size="sm" c="dimmed">
              No attempt made yet.
            </Text>
          ) : (
            <Table verticalSpacing={4} aria-label="Attempts" fz="sm">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>#</Table.Th>
                  <Table.Th>When</Table.Th>
                  <Table.Th>Answer</Table.Th>
                  <Table.Th>Took</Table.Th>
                  <Table.Th>Response body</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {d.attemptsDetail.map((a) => (
                  <Table.Tr key={`${a.generation}-${a.attempt}`}>
                    <Table.Td>
                      {a.attempt}
                      {a.generation > 0 ? ` (retry ${a.generation})` : ''}
                    </Table.Td>
                    <Table.Td>
                      <DateTime value={a.createdAt} />
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm" c={a.statusCode !== null && a.statusCode < 300 ? 'teal.9' : 'red.9'} ff="monospace" style={{ wordBreak: 'break-word' }}>
                        {answerOf(a)}
                      </Text>
                    </Table.Td>
                    <Table.Td>{formatDuration(a.durationMs)}</Table.Td>
                    <Table.Td>
                      {a.responseSnippet !== null ? (
                        <Code block style={{ maxHeight: 160, maxWidth: 480, overflow: 'auto', whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
                          {a.responseSnippet}
                        </Code>
                      ) : (
                        <Text size="sm" c="dimmed">
                          {a.statusCode === null ? 'no response' : 'none (empty or not text)'}
                        </Text>
                      )}
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )
        }
      </QueryState>
      <Group gap="sm">
        <Text size="xs" c="dimmed" ff="monospace">
          webhook-id {detail.data?.eventId}
        </Text>
        <TemporalLink workflowId={workflowIds.delivery(deliveryId)}>Delivery in Temporal</TemporalLink>
      </Group>
    </Stack>
  );
}

/** An attempt's answer in one line: its status, and the error when it says more than the status. */
function answerOf(a: { statusCode: number | null; error: string | null }): string {
  const status = a.statusCode !== null ? `HTTP ${a.statusCode}` : '';
  if (!a.error) return status;
  if (!status || a.error.startsWith(status)) return a.error;
  return `${status} — ${a.error}`;
}
