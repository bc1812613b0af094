import { Badge, Group, Text, Tooltip } from '@mantine/core';
import { client } from '../../api/client';
import { pageOf, useCursorList } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { EnabledBadge } from '../../components/EnabledBadge';
import { ResourceList } from '../../components/ResourceList';
import { ResourceTable, type Column } from '../../components/ResourceTable';
import { useAccountId, useAccountKey } from '../../session/account';
import type { Webhook } from './webhook-api';
import { WebhookFormDialog } from './WebhookFormDialog';

/** The account's webhooks (GET /api/webhooks): where events go out to, and where requests come in. */
export function WebhooksList() {
  const accountId = useAccountId();
  const list = useCursorList(useAccountKey('webhooks', 'list'), async (cursor) => pageOf(await client.GET('/api/webhooks', { params: { query: { cursor, limit: 50 } } })), {
    refetchInterval: 10_000,
  });
  return (
    <ResourceList
      title="Webhooks"
      description="Outgoing webhooks deliver the account's events to your endpoints, signed and retried; incoming ones turn requests to their URL into events."
      noun={{ one: 'webhook', many: 'webhooks' }}
      list={list}
      empty={{
        verb: 'Add',
        body: 'Add an outgoing webhook to have events (a run completed, a trigger fired…) sent to your endpoint, or an incoming one to receive requests as events that triggers can listen for.',
      }}
      createDialog={(close) => <WebhookFormDialog onClose={close} />}
    >
      {(webhooks) => <ResourceTable label="Webhooks" rows={webhooks} href={(w) => `/w/${accountId}/webhooks/${w.id}`} columns={COLUMNS} />}
    </ResourceList>
  );
}

/** A webhook's columns: which way it goes, its URL, its events, how many it handled and when last, whether it is on (and why the platform turned it off). */
const COLUMNS: Column<Webhook>[] = [
  { header: 'Direction', cell: (w) => w.direction },
  {
    header: 'URL',
    cell: (w) => (
      <Text size="sm" ff="monospace" lineClamp={1} style={{ wordBreak: 'break-all' }}>
        {w.url}
      </Text>
    ),
  },
  {
    header: 'Events',
    cell: (w) => (
      <Text size="sm" lineClamp={2}>
        {w.events.join(', ')}
      </Text>
    ),
  },
  { header: 'Count', cell: (w) => w.triggerCount.toLocaleString() },
  { header: 'Last', cell: (w) => <DateTime value={w.lastTriggered} relative /> },
  {
    header: 'State',
    cell: (w) => (
      <Group gap={4}>
        {w.disabledReason ? (
          <Tooltip label={w.disabledReason} multiline w={320}>
            <Badge variant="light" color="red" tabIndex={0}>
              disabled by the platform
            </Badge>
          </Tooltip>
        ) : (
          <EnabledBadge enabled={w.enabled} />
        )}
      </Group>
    ),
  },
];
