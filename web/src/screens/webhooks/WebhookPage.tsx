import { Alert, Button, Code, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, type ReactNode } from 'react';
import { useNavigate, useParams, useSearchParams } from 'react-router';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { DateTime } from '../../components/DateTime';
import { DetailHeader } from '../../components/DetailHeader';
import { CopyValue, Masked } from '../../components/ShownOnce';
import { Loading, QueryState } from '../../components/states';
import { formatDuration } from '../../lib/dates';
import { useWrite } from '../../lib/mutations';
import { useAccountId, useAccountKey } from '../../session/account';
import { Can } from '../../session/permissions';
import { DeliveriesList } from './DeliveriesList';
import { RecoverForm } from './RecoverForm';
import type { Webhook } from './webhook-api';
import { WebhookFormDialog } from './WebhookFormDialog';

const WebhookStatsChart = lazy(() => import('./WebhookStatsChart'));

/**
 * A webhook's page: where it points or listens, enable/disable (and why the platform disabled it), edit,
 * delete; for an outgoing one, its health now and over time, Send test, its deliveries as they happen with
 * Retry, and Recover.
 */
export function WebhookPage() {
  const { webhookId = '' } = useParams();
  const webhook = useQuery({
    queryKey: useAccountKey('webhooks', webhookId),
    queryFn: async () => unwrap(await client.GET('/api/webhooks/{id}', { params: { path: { id: webhookId } } })),
    refetchInterval: 10_000,
  });
  return (
    <QueryState query={webhook} loadingLabel="Loading the webhook">
      {(data) => <WebhookView webhook={data} />}
    </QueryState>
  );
}

function WebhookView({ webhook }: { webhook: Webhook }) {
  const accountId = useAccountId();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [editing, edit] = useDisclosure(false);
  const invalidates = [useAccountKey('webhooks')];
  const path = { params: { path: { id: webhook.id } } };
  const outgoing = webhook.direction === 'outgoing';
  const test = useWrite(async () => unwrap(await client.POST('/api/webhooks/{id}/test', { ...path, body: {}, headers: { 'idempotency-key': crypto.randomUUID() } })), {
    invalidates,
    success: 'Test event sent: its delivery shows below in a moment',
  });
  const toggle = useWrite(async () => unwrap(await client.PATCH('/api/webhooks/{id}', { ...path, body: { enabled: !webhook.enabled } })), {
    invalidates,
    success: (w) => (w.enabled ? `${w.name} is enabled` : `${w.name} is disabled`),
  });
  const remove = useWrite(async () => unwrap(await client.DELETE('/api/webhooks/{id}', path)), {
    invalidates,
    success: `Deleted ${webhook.name}`,
    onSuccess: () => navigate(`/w/${accountId}/webhooks`),
  });

  return (
    <>
      <DetailHeader
        crumbs={[{ label: 'Webhooks', to: `/w/${accountId}/webhooks` }]}
        name={webhook.name}
        kind={webhook.direction}
        enabled={webhook.enabled}
        offColor={webhook.disabledReason ? 'red' : undefined}
        action={
          outgoing && (
            <Button onClick={() => test.mutate(undefined)} loading={test.isPending} disabled={!webhook.enabled} title={webhook.enabled ? undefined : 'Enable it to send a test'}>
              Send test
            </Button>
          )
        }
        toggle={toggle}
        onEdit={edit.open}
        remove={{ ...remove, message: 'The webhook and its delivery log are deleted; pending deliveries are not made.', confirmLabel: 'Delete webhook' }}
      />
      <Stack gap="md">
        {webhook.disabledReason && (
          <Alert color="red" variant="light" title="Disabled by the platform">
            {webhook.disabledReason}. Fix the endpoint, then enable it again (that clears this); Recover sends what failed meanwhile.
          </Alert>
        )}
        <ApiErrorAlert error={test.error ?? toggle.error} />
        <Paper withBorder p="md" radius="md">
          <SimpleGrid cols={{ base: 1, md: 3 }}>
            <div>
              <Text size="sm" fw={500}>
                {outgoing ? 'Delivers to' : 'Receives at (POST JSON)'}
              </Text>
              <Group gap="xs" wrap="nowrap">
                <Code style={{ wordBreak: 'break-all' }}>{webhook.url}</Code>
                <CopyValue value={webhook.url} label={outgoing ? 'Copy endpoint URL' : 'Copy webhook URL'} />
              </Group>
            </div>
            <div>
              <Text size="sm" fw={500}>
                Events
              </Text>
              <Text size="sm">{webhook.events.join(', ')}</Text>
            </div>
            <div>
              <Text size="sm" fw={500}>
                Signing secret
              </Text>
              {webhook.secret ? <Masked value={webhook.secret} /> : <Text size="sm">none: {outgoing ? 'deliveries are not signed' : 'requests need no signature'}</Text>}
            </div>
          </SimpleGrid>
          <Text size="sm" c="dimmed" mt="sm">
            {outgoing ? 'Events handed to it' : 'Requests accepted'}: {webhook.triggerCount.toLocaleString()}, last <DateTime value={webhook.lastTriggered} relative />.
          </Text>
        </Paper>
        {outgoing ? (
          <>
            <Health webhookId={webhook.id} />
            <Paper withBorder p="md" radius="md">
              <Suspense fallback={<Loading label="Loading the chart" />}>
                <WebhookStatsChart webhookId={webhook.id} createdAt={webhook.createdAt} />
              </Suspense>
            </Paper>
            <section aria-labelledby="deliveries-title">
              <Title order={2} size="h4" id="deliveries-title" mb="xs">
                Deliveries
              </Title>
              <DeliveriesList webhookId={webhook.id} openId={params.get('delivery')} />
            </section>
            <Can right="write">
              <Paper withBorder p="md" radius="md">
                <Title order={2} size="h5" mb="xs">
                  Recover failed deliveries
                </Title>
                <RecoverForm webhookId={webhook.id} />
              </Paper>
            </Can>
          </>
        ) : (
          <Paper withBorder p="md" radius="md">
            <Title order={2} size="h5" mb="xs">
              Sending to it
            </Title>
            <Text size="sm">
              POST any JSON to its URL; each accepted request is emitted as {webhook.events.join(', ')} with the body as <Code>data.payload</Code>, which event triggers
              can listen for. {webhook.secret ? 'Sign each request with the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature).' : ''}
            </Text>
          </Paper>
        )}
      </Stack>
      {editing && <WebhookFormDialog webhook={webhook} onClose={edit.close} />}
    </>
  );
}

/** The endpoint's health now (GET …/stats): success over the last day, latency, pending, and its last success and failure. */
function Health({ webhookId }: { webhookId: string }) {
  const stats = useQuery({
    queryKey: useAccountKey('webhooks', webhookId, 'stats'),
    queryFn: async () => unwrap(await client.GET('/api/webhooks/{id}/stats', { params: { path: { id: webhookId } } })),
    refetchInterval: 5_000,
  });
  return (
    <QueryState query={stats} loadingLabel="Loading the endpoint's health">
      {(s) => {
        const attempts = s.last24h.attempts.succeeded + s.last24h.attempts.failed;
        const rate = attempts ? Math.round((s.last24h.attempts.succeeded / attempts) * 1000) / 10 : null;
        const failing = s.lastFailure && (!s.lastSuccess || Date.parse(s.lastFailure.at) > Date.parse(s.lastSuccess.at));
        return (
          <SimpleGrid cols={{ base: 2, md: 4 }}>
            <Stat label="Success, last 24 h" value={rate === null ? '—' : `${rate}%`} hint={`${attempts} attempts`} />
            <Stat label="Latency p50 / p99" value={`${formatDuration(s.last24h.attemptLatencyMs.p50)} / ${formatDuration(s.last24h.attemptLatencyMs.p99)}`} />
            <Stat label="Pending now" value={String(s.pendingDeliveries)} />
            <Stat
              label={failing ? 'Failing since' : 'Last success'}
              value={failing ? <DateTime value={s.lastFailure!.at} relative /> : <DateTime value={s.lastSuccess?.at} relative />}
              hint={failing ? (s.lastFailure!.statusCode ? `HTTP ${s.lastFailure!.statusCode}` : (s.lastFailure!.error ?? undefined)) : undefined}
            />
          </SimpleGrid>
        );
      }}
    </QueryState>
  );
}

function Stat({ label, value, hint }: { label: string; value: ReactNode; hint?: string }) {
  return (
    <Paper withBorder p="sm" radius="md">
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text fw={600} size="lg">
        {value}
      </Text>
      {hint && (
        <Text size="xs" c="dimmed" lineClamp={2}>
          {hint}
        </Text>
      )}
    </Paper>
  );
}
