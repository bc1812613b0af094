import { Button, Group, Progress, Stack, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { TemporalLink } from '../../components/TemporalLink';
import { useIntentKey, useWrite } from '../../lib/mutations';
import { workflowIds } from '../../lib/temporal';
import { useAccountKey } from '../../session/account';

/** A datetime-local input's value (the viewer's wall clock) as an ISO instant. */
const isoOf = (local: string) => (local ? new Date(local).toISOString() : undefined);
/** An instant as a datetime-local value in the viewer's zone. */
function localOf(date: Date): string {
  const shifted = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return shifted.toISOString().slice(0, 16);
}

/**
 * Recover: attempt again every delivery that failed between two times (your time zone), as a background
 * job (POST …/recover) whose progress shows here until it completes.
 */
export function RecoverForm({ webhookId }: { webhookId: string }) {
  const [since, setSince] = useState(() => localOf(new Date(Date.now() - 86_400_000)));
  const [until, setUntil] = useState('');
  const [recoveryId, setRecoveryId] = useState<string | null>(null);
  const idempotencyKey = useIntentKey();
  const recover = useWrite(
    async () =>
      unwrap(
        await client.POST('/api/webhooks/{id}/recover', {
          params: { path: { id: webhookId } },
          body: { since: isoOf(since)!, ...(until ? { until: isoOf(until) } : {}) },
          headers: { 'idempotency-key': `${idempotencyKey}-${since}-${until}` },
        }),
      ),
    { invalidates: [useAccountKey('webhooks', webhookId)], success: (r) => `Recovering ${r.total} failed deliveries`, onSuccess: (r) => setRecoveryId(r.id) },
  );
  const progress = useQuery({
    queryKey: useAccountKey('webhooks', webhookId, 'recoveries', recoveryId),
    queryFn: async () => unwrap(await client.GET('/api/webhooks/{id}/recoveries/{recoveryId}', { params: { path: { id: webhookId, recoveryId: recoveryId! } } })),
    enabled: Boolean(recoveryId),
    refetchInterval: (query) => (query.state.data?.status === 'running' ? 2_000 : false),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    recover.mutate(undefined);
  };
  const r = progress.data;
  return (
    <form onSubmit={submit}>
      <Stack gap="sm">
        <Text size="sm" c="dimmed">
          Once your endpoint is back, send again every delivery that failed in a window (at most 30 days; one recovery per minute).
        </Text>
        <Group align="flex-end" wrap="wrap">
          <TextInput label="Failed since" type="datetime-local" required value={since} onChange={(e) => setSince(e.currentTarget.value)} />
          <TextInput label="Until (empty: now)" type="datetime-local" value={until} onChange={(e) => setUntil(e.currentTarget.value)} />
          <Button type="submit" variant="light" loading={recover.isPending} disabled={!since}>
            Recover
          </Button>
        </Group>
        <ApiErrorAlert error={recover.error} />
        {r && (
          <Stack gap={4} aria-live="polite">
            <Text size="sm">
              Recovery {r.status}: {r.attempted} of {r.total} attempted, {r.succeeded} succeeded, {r.failed} failed.
            </Text>
            <Progress value={r.total ? (r.attempted / r.total) * 100 : 100} aria-label="Recovery progress" />
            <TemporalLink workflowId={workflowIds.recovery(r.id)}>Recovery in Temporal</TemporalLink>
          </Stack>
        )}
      </Stack>
    </form>
  );
}
