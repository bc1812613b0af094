import { Anchor, Button, Code, Group, List, Paper, SimpleGrid, Stack, Tabs, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { DateTime } from '../../components/DateTime';
import { DetailHeader } from '../../components/DetailHeader';
import { CopyValue, Masked } from '../../components/ShownOnce';
import { QueryState } from '../../components/states';
import { TemporalLink } from '../../components/TemporalLink';
import { cronInWords } from '../../lib/cron-words';
import { useWrite } from '../../lib/mutations';
import { useAccountId, useAccountKey } from '../../session/account';
import { FiresList } from './FiresList';
import { isScheduled, triggerApi, type Trigger, type TriggerScope } from './trigger-api';
import { TRIGGER_TYPE_LABELS } from './trigger-labels';
import { TriggerFormDialog } from './TriggerFormDialog';
import { TriggerTimeline } from './TriggerTimeline';

/** A standalone trigger's page (/w/:accountId/triggers/:triggerId). */
export function UserTriggerPage() {
  return <TriggerPage scope="user" />;
}

/** An agent trigger's page (/w/:accountId/agents/:agentId/triggers/:triggerId). */
export function AgentTriggerPage() {
  return <TriggerPage scope="agent" />;
}

/**
 * One trigger: what fires it (a schedule in words with its next times, a hook URL, an event and filter),
 * Fire now, enable/disable, edit and delete for the roles that may; its fires as they come, and for a
 * schedule the timeline of every time it should have fired and what followed.
 */
function TriggerPage({ scope }: { scope: TriggerScope }) {
  const { triggerId = '' } = useParams();
  const trigger = useQuery({
    queryKey: useAccountKey('triggers', triggerId),
    queryFn: () => triggerApi.get(scope, triggerId),
    refetchInterval: 5_000,
  });
  return (
    <QueryState query={trigger} loadingLabel="Loading the trigger">
      {(data) => <TriggerView trigger={data} scope={scope} />}
    </QueryState>
  );
}

function TriggerView({ trigger, scope }: { trigger: Trigger; scope: TriggerScope }) {
  const accountId = useAccountId();
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const [editing, edit] = useDisclosure(false);
  const scheduled = isScheduled(trigger.type);
  const agent = useQuery({
    queryKey: useAccountKey('agents', trigger.agentId),
    queryFn: async () => unwrap(await client.GET('/api/agents/{id}', { params: { path: { id: trigger.agentId! } } })),
    enabled: Boolean(trigger.agentId),
  });
  const next = useQuery({
    queryKey: useAccountKey('triggers', trigger.id, 'preview', trigger.updatedAt),
    // Ten, of which the five still ahead are shown: a fast schedule's next times pass between refreshes.
    queryFn: () => triggerApi.preview(scope, trigger.id, 10),
    enabled: scheduled,
    refetchInterval: 5_000,
  });
  const invalidates = [useAccountKey('triggers')];
  // Each press is its own fire (its own Idempotency-Key): a retried request is not fired twice.
  const fire = useWrite(() => triggerApi.fire(scope, trigger.id, crypto.randomUUID()), { invalidates, success: 'Fired: it shows in Fires in a moment' });
  const toggle = useWrite(() => triggerApi.update(scope, trigger.id, { enabled: !trigger.enabled }), {
    invalidates,
    success: (t) => (t.enabled ? `${t.name} is enabled` : `${t.name} is disabled: it does not fire`),
  });
  const listUrl = scope === 'agent' && trigger.agentId ? `/w/${accountId}/agents/${trigger.agentId}/triggers` : `/w/${accountId}/triggers`;
  const remove = useWrite(() => triggerApi.remove(scope, trigger.id), { invalidates, success: `Deleted ${trigger.name}`, onSuccess: () => navigate(listUrl) });
  const crumbs =
    scope === 'agent' && trigger.agentId
      ? [
          { label: 'Agents', to: `/w/${accountId}/agents` },
          { label: agent.data?.name ?? 'Agent', to: `/w/${accountId}/agents/${trigger.agentId}/overview` },
          { label: 'Triggers', to: listUrl },
        ]
      : [{ label: 'Triggers', to: listUrl }];
  const view = params.get('view') === 'timeline' && scheduled ? 'timeline' : 'fires';

  return (
    <>
      <DetailHeader
        crumbs={crumbs}
        name={trigger.name}
        kind={TRIGGER_TYPE_LABELS[trigger.type].label}
        enabled={trigger.enabled}
        description={TRIGGER_TYPE_LABELS[trigger.type].description}
        action={
          <Button onClick={() => fire.mutate(undefined)} loading={fire.isPending} disabled={!trigger.enabled} title={trigger.enabled ? undefined : 'Enable it to fire it'}>
            Fire now
          </Button>
        }
        toggle={toggle}
        onEdit={edit.open}
        remove={{
          ...remove,
          message: 'The trigger and its fire history are deleted, and its schedule removed from Temporal. Runs it started stay.',
          confirmLabel: 'Delete trigger',
        }}
      />
      <Stack gap="md">
        <ApiErrorAlert error={fire.error ?? toggle.error} />
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          <Paper withBorder p="md" radius="md">
            <Title order={2} size="h5" mb="xs">
              Fires when
            </Title>
            <TriggerConfig trigger={trigger} />
          </Paper>
          <Paper withBorder p="md" radius="md">
            <Stack gap={6}>
              <Title order={2} size="h5">
                {scheduled ? (trigger.enabled ? 'Next 5 fire times' : 'Would fire next, once enabled') : 'Activity'}
              </Title>
              {scheduled && (
                <QueryState query={next} loadingLabel="Loading the next times">
                  {(times) => (
                    <List size="sm" aria-label="Next fire times" spacing={2}>
                      {times.filter((t) => Date.parse(t.at) > Date.now()).slice(0, 5).map((t) => (
                        <List.Item key={t.at}>
                          <DateTime value={t.at} />{' '}
                          <Text span size="xs" c="dimmed" ff="monospace">
                            ({t.localTime})
                          </Text>
                        </List.Item>
                      ))}
                    </List>
                  )}
                </QueryState>
              )}
              <Text size="sm">
                Fired {trigger.fireCount.toLocaleString()} time{trigger.fireCount === 1 ? '' : 's'}; last <DateTime value={trigger.lastFired} relative />.
              </Text>
              <Text size="sm">
                Agent:{' '}
                {trigger.agentId ? (
                  <Anchor component={Link} to={`/w/${accountId}/agents/${trigger.agentId}/overview`}>
                    {agent.data?.name ?? 'its agent'}
                  </Anchor>
                ) : (
                  'none (each fire emits trigger.fired)'
                )}
              </Text>
              {scheduled && <TemporalLink scheduleOf={trigger.id}>Schedule in Temporal</TemporalLink>}
            </Stack>
          </Paper>
        </SimpleGrid>
        <Tabs
          value={view}
          onChange={(value) =>
            setParams((p) => {
              const n = new URLSearchParams(p);
              if (value === 'timeline') n.set('view', 'timeline');
              else n.delete('view');
              return n;
            })
          }
        >
          <Tabs.List mb="sm">
            <Tabs.Tab value="fires">Fire history</Tabs.Tab>
            {scheduled && <Tabs.Tab value="timeline">Timeline</Tabs.Tab>}
          </Tabs.List>
          <Tabs.Panel value="fires">{view === 'fires' && <FiresList scope={scope} triggerId={trigger.id} />}</Tabs.Panel>
          {scheduled && <Tabs.Panel value="timeline">{view === 'timeline' && <TriggerTimeline scope={scope} triggerId={trigger.id} createdAt={trigger.createdAt} next={next.data} />}</Tabs.Panel>}
        </Tabs>
      </Stack>
      {editing && <TriggerFormDialog scope={scope} agentId={trigger.agentId ?? undefined} trigger={trigger} onClose={edit.close} />}
    </>
  );
}

/** The trigger's config as a person reads it; secrets as the API shows them (masked). */
function TriggerConfig({ trigger }: { trigger: Trigger }) {
  if (isScheduled(trigger.type)) {
    const c = trigger.configJson as { cronExpression: string; timezone: string; overlapPolicy: string; catchupWindow: string };
    return (
      <Stack gap={4}>
        <Text size="sm">{cronInWords(c.cronExpression) ?? c.cronExpression}</Text>
        <Text size="sm">
          <Code>{c.cronExpression}</Code> in {c.timezone}
        </Text>
        <Text size="xs" c="dimmed">
          Overlap policy {c.overlapPolicy}; catch-up window {c.catchupWindow}
        </Text>
      </Stack>
    );
  }
  if (trigger.type === 'webhook') {
    const c = trigger.configJson as { webhookPath: string; secretToken: string };
    return (
      <Stack gap={6}>
        <Text size="sm">A POST to its hook URL with the header X-Trigger-Token fires it; the JSON body is the fire&apos;s payload.</Text>
        {trigger.hookUrl && (
          <Group gap="xs" wrap="nowrap">
            <Code style={{ wordBreak: 'break-all' }}>{trigger.hookUrl}</Code>
            <CopyValue value={trigger.hookUrl} label="Copy hook URL" />
          </Group>
        )}
        <Text size="sm">
          Secret token: <Masked value={c.secretToken} />
        </Text>
      </Stack>
    );
  }
  const c = trigger.configJson as { eventType: string; eventFilter: Record<string, unknown> };
  const conditions = Object.entries(c.eventFilter ?? {});
  return (
    <Stack gap={4}>
      <Text size="sm">
        An event <Code>{c.eventType}</Code>
        {conditions.length ? ' where:' : ', any.'}
      </Text>
      {conditions.length > 0 && (
        <List size="sm" aria-label="Filter conditions">
          {conditions.map(([path, value]) => (
            <List.Item key={path}>
              <Code>{path}</Code> {describeCondition(value)}
            </List.Item>
          ))}
        </List>
      )}
    </Stack>
  );
}

function describeCondition(value: unknown): string {
  if (value && typeof value === 'object') {
    if ('$contains' in value) return `contains "${String((value as { $contains: string }).$contains)}"`;
    if ('$regex' in value) return `matches /${String((value as { $regex: string }).$regex)}/`;
  }
  return `is ${JSON.stringify(value)}`;
}
