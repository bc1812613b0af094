import { Anchor, Badge, Group, Text } from '@mantine/core';
import { Link } from 'react-router';
import { useAccountId } from '../../session/account';
import type { FireDelivery } from './trigger-api';
import { DELIVERY_STATUS_COLOR } from '../webhooks/webhook-api';

/** The deliveries that followed a fire, each a link to it on its webhook's page (where it can be retried). */
export function FireDeliveries({ deliveries, empty = 'No deliveries' }: { deliveries: FireDelivery[]; empty?: string }) {
  const accountId = useAccountId();
  if (deliveries.length === 0) {
    return (
      <Text size="xs" c="dimmed">
        {empty}
      </Text>
    );
  }
  return (
    <Group gap={6}>
      {deliveries.map((d) => (
        <Anchor key={d.id} component={Link} to={`/w/${accountId}/webhooks/${d.webhookId}?delivery=${d.id}`} underline="never" aria-label={`Delivery to ${d.webhookName} of ${d.eventType}: ${d.status}`}>
          <Badge variant="light" color={DELIVERY_STATUS_COLOR[d.status] ?? 'gray'} style={{ cursor: 'pointer', textTransform: 'none' }}>
            {d.webhookName} · {d.eventType} · {d.status}
            {d.lastStatusCode ? ` (${d.lastStatusCode})` : ''}
          </Badge>
        </Anchor>
      ))}
    </Group>
  );
}
