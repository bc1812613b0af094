import { Anchor, Button, Group, Modal, NativeSelect, PasswordInput, Select, Stack, Switch, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { client } from '../../api/client';
import { ApiError, fieldOfMessage, unwrap } from '../../api/errors';
import { useComponentSchema, validateAgainst, variantsByType, type FieldError, type JsonSchema } from '../../api/openapi-schema';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { CopyableUrl } from '../../components/CopyableUrl';
import { FormButtons } from '../../components/FormButtons';
import { ShownOnce } from '../../components/ShownOnce';
import { viewerTimeZone } from '../../lib/dates';
import { useIntentKey, useWrite } from '../../lib/mutations';
import { useAccountId, useAccountKey } from '../../session/account';
import { useCan } from '../../session/permissions';
import { EventFilterEditor, type EventFilter } from './EventFilterEditor';
import { ScheduleFields, type ScheduleConfig } from './ScheduleFields';
import { isScheduled, triggerApi, triggerUrl, type Trigger, type TriggerScope, type TriggerType, type TriggerUpdate } from './trigger-api';
import { TRIGGER_TYPE_LABELS } from './trigger-labels';

const TYPES = Object.keys(TRIGGER_TYPE_LABELS) as TriggerType[];
const MASKED = /^•+/;

interface WebhookConfig {
  webhookPath: string;
  secretToken: string;
  newToken: boolean;
}
interface EventConfig {
  eventType: string;
  eventFilter: EventFilter;
}

function initialSchedule(trigger?: Trigger): ScheduleConfig {
  const c = (trigger && isScheduled(trigger.type) ? trigger.configJson : {}) as Partial<ScheduleConfig>;
  return { cronExpression: c.cronExpression ?? '', timezone: c.timezone ?? viewerTimeZone, overlapPolicy: c.overlapPolicy ?? 'skip', catchupWindow: c.catchupWindow ?? '1h' };
}
function initialEvent(trigger?: Trigger): EventConfig {
  const c = (trigger && ['event', 'agent_finished', 'agent_output'].includes(trigger.type) ? trigger.configJson : {}) as Partial<EventConfig>;
  return { eventType: c.eventType ?? '', eventFilter: c.eventFilter ?? {} };
}

/** The config of a type as a create sends it (and as the schema checks it). */
function configFor(type: TriggerType, schedule: ScheduleConfig, webhook: WebhookConfig, event: EventConfig): Record<string, unknown> {
  if (isScheduled(type)) return { ...schedule, cronExpression: schedule.cronExpression.trim() };
  if (type === 'webhook') {
    return {
      ...(webhook.webhookPath.trim() ? { webhookPath: webhook.webhookPath.trim() } : {}),
      ...(webhook.secretToken && !MASKED.test(webhook.secretToken) ? { secretToken: webhook.secretToken } : {}),
    };
  }
  return { ...(event.eventType ? { eventType: event.eventType } : {}), eventFilter: event.eventFilter };
}

/** An update of the same type is a JSON merge patch onto the stored config: what changed, and null for what was removed. */
function patchFor(trigger: Trigger, config: Record<string, unknown>, webhook: WebhookConfig): Record<string, unknown> {
  if (trigger.type === 'webhook') {
    const stored = trigger.configJson as { webhookPath: string };
    return {
      ...(config.webhookPath !== undefined && config.webhookPath !== stored.webhookPath ? { webhookPath: config.webhookPath } : {}),
      ...(webhook.newToken ? { secretToken: config.secretToken ?? null } : {}),
    };
  }
  if (isScheduled(trigger.type)) return config;
  const stored = (trigger.configJson as { eventFilter?: EventFilter }).eventFilter ?? {};
  const filter = config.eventFilter as EventFilter;
  const removed = Object.fromEntries(Object.keys(stored).filter((key) => !(key in filter)).map((key) => [key, null]));
  return { ...config, eventFilter: { ...removed, ...filter } };
}

/**
 * Create or edit a trigger: a typed form per type (schedule/cron, webhook, event/agent_finished/agent_output),
 * its options and rules read from the API's own request schema (CreateTrigger / CreateUserTrigger) and the
 * body checked against it before it is sent; the API's 400 is shown on the field it names. A webhook
 * trigger's token is shown once, with its hook URL.
 */
export function TriggerFormDialog({ scope, agentId, trigger, onClose }: { scope: TriggerScope; agentId?: string; trigger?: Trigger; onClose: () => void }) {
  const accountId = useAccountId();
  const navigate = useNavigate();
  const editing = Boolean(trigger);
  const schemaName = scope === 'user' ? 'CreateUserTrigger' : 'CreateTrigger';
  const { schema, error: schemaError } = useComponentSchema(schemaName);
  const variants = schema ? variantsByType(schema) : undefined;
  const [type, setType] = useState<TriggerType>(trigger?.type ?? 'cron');
  const [name, setName] = useState(trigger?.name ?? '');
  const [enabled, setEnabled] = useState(trigger?.enabled ?? true);
  const [linkedAgent, setLinkedAgent] = useState<string | null>(trigger?.agentId ?? null);
  const [schedule, setSchedule] = useState(() => initialSchedule(trigger));
  const [webhook, setWebhook] = useState<WebhookConfig>(() => ({
    webhookPath: trigger?.type === 'webhook' ? (trigger.configJson as { webhookPath: string }).webhookPath : '',
    secretToken: trigger?.type === 'webhook' ? (trigger.configJson as { secretToken: string }).secretToken : '',
    newToken: false,
  }));
  const [event, setEvent] = useState(() => initialEvent(trigger));
  const [checked, setChecked] = useState<FieldError[]>([]);
  const [created, setCreated] = useState<Trigger | null>(null);
  const idempotencyKey = useIntentKey();
  const mayWrite = useCan('write');
  const variant = variants?.get(type);
  const configSchema = variant?.properties?.configJson;

  const agents = useQuery({
    queryKey: useAccountKey('agents', 'picker'),
    queryFn: async () => unwrap(await client.GET('/api/agents', { params: { query: { limit: 200 } } })),
    enabled: scope === 'user',
  });

  const save = useWrite(
    async (body: Record<string, unknown>) => {
      if (trigger) return triggerApi.update(scope, trigger.id, body as TriggerUpdate);
      const headers = { 'idempotency-key': idempotencyKey };
      if (scope === 'agent') {
        return unwrap(await client.POST('/api/agents/{agentId}/triggers', { params: { path: { agentId: agentId! } }, body: body as never, headers }));
      }
      return unwrap(await client.POST('/api/user-triggers', { body: body as never, headers }));
    },
    {
      invalidates: [useAccountKey('triggers')],
      success: (saved) => (editing ? `Saved ${saved.name}` : `Created ${saved.name}`),
      onSuccess: (saved) => {
        const secret = (saved.configJson as { secretToken?: string }).secretToken;
        if (saved.type === 'webhook' && secret && !MASKED.test(secret)) setCreated(saved);
        else if (!editing) navigate(triggerUrl(accountId, saved, scope));
        else onClose();
      },
    },
  );

  const apiField = save.error instanceof ApiError && save.error.status === 400 ? fieldOfMessage(save.error.message) : null;
  const errorOf = (field: string) =>
    checked.find((e) => e.path === field || e.path.startsWith(`${field}.`))?.message ??
    (apiField && (apiField === field || apiField.startsWith(`${field}.`)) ? (save.error as ApiError).message.replace(/^body\.[^:]+: /, '') : undefined);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const config = configFor(type, schedule, webhook, event);
    const whole: Record<string, unknown> = { type, name: name.trim(), enabled, configJson: config, ...(scope === 'user' ? { agentId: linkedAgent } : {}) };
    // Checked against the API's own schema (a masked token is the stored one, not a new value to check).
    const problems = variant ? validateAgainst(variant, whole) : [];
    setChecked(problems);
    if (problems.length) return;
    if (!trigger) return save.mutate(whole);
    const body: Record<string, unknown> = { type, name: name.trim(), enabled, ...(scope === 'user' ? { agentId: linkedAgent } : {}) };
    body.configJson = type === trigger.type ? patchFor(trigger, config, webhook) : config;
    save.mutate(body);
  };

  if (created) return <CreatedHook trigger={created} url={triggerUrl(accountId, created, scope)} onClose={onClose} />;

  const eventTypes = ((configSchema?.properties?.eventType?.enum ?? []) as string[]).map(String);
  return (
    <Modal opened onClose={onClose} title={editing ? `Edit ${trigger!.name}` : 'New trigger'} size="lg" centered>
      <form onSubmit={submit} noValidate>
        <Stack>
          <ApiErrorAlert error={schemaError} />
          {!mayWrite && <Text size="sm" fw={500}>Your role here is read-only: the API will refuse this.</Text>}
          <TextInput label="Name" required maxLength={200} value={name} onChange={(e) => setName(e.currentTarget.value)} error={errorOf('name')} data-autofocus />
          <NativeSelect
            label="Type"
            description={TRIGGER_TYPE_LABELS[type].description}
            data={TYPES.map((t) => ({ value: t, label: TRIGGER_TYPE_LABELS[t].label }))}
            value={type}
            onChange={(e) => setType(e.currentTarget.value as TriggerType)}
          />
          {scope === 'user' && (
            <Select
              label="Agent"
              description="Each fire starts a run of this agent; with none, a fire emits trigger.fired for webhooks and other triggers"
              placeholder="No agent"
              clearable
              searchable
              data={(agents.data ?? []).map((a) => ({ value: a.id, label: a.name }))}
              value={linkedAgent}
              onChange={setLinkedAgent}
              error={errorOf('agentId')}
            />
          )}
          {isScheduled(type) && (
            <ScheduleFields schema={configSchema as JsonSchema | undefined} value={schedule} onChange={setSchedule} errorOf={errorOf} />
          )}
          {type === 'webhook' && (
            <>
              <TextInput
                label="Hook path"
                description={configSchema?.properties?.webhookPath?.description ?? 'Generated when left empty'}
                placeholder="generated when empty"
                value={webhook.webhookPath}
                onChange={(e) => setWebhook({ ...webhook, webhookPath: e.currentTarget.value })}
                error={errorOf('configJson.webhookPath')}
                styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
              />
              {editing && trigger!.type === 'webhook' ? (
                <Stack gap={4}>
                  <Switch
                    label="Replace the secret token"
                    description={`Now ${(trigger!.configJson as { secretToken: string }).secretToken}; callers holding the old token are refused once replaced`}
                    checked={webhook.newToken}
                    onChange={(e) => setWebhook({ ...webhook, newToken: e.currentTarget.checked, secretToken: '' })}
                  />
                  {webhook.newToken && (
                    <PasswordInput
                      label="New secret token"
                      description="Leave empty to have one generated (shown once)"
                      value={webhook.secretToken}
                      onChange={(e) => setWebhook({ ...webhook, secretToken: e.currentTarget.value })}
                      error={errorOf('configJson.secretToken')}
                    />
                  )}
                </Stack>
              ) : (
                <PasswordInput
                  label="Secret token"
                  description="What callers send in X-Trigger-Token. Leave empty to have one generated; it is shown once."
                  value={webhook.secretToken}
                  onChange={(e) => setWebhook({ ...webhook, secretToken: e.currentTarget.value })}
                  error={errorOf('configJson.secretToken')}
                />
              )}
            </>
          )}
          {['event', 'agent_finished', 'agent_output'].includes(type) && (
            <>
              <NativeSelect
                label="Event type"
                required={type === 'event'}
                description={type === 'event' ? 'The event that fires it' : 'Default agent.completed'}
                data={[...(type === 'event' ? [{ value: '', label: 'Choose an event type' }] : [{ value: '', label: 'agent.completed (default)' }]), ...eventTypes.map((t) => ({ value: t, label: t }))]}
                value={event.eventType}
                onChange={(e) => setEvent({ ...event, eventType: e.currentTarget.value })}
                error={errorOf('configJson.eventType')}
              />
              <EventFilterEditor
                key={type}
                value={event.eventFilter}
                onChange={(eventFilter) => setEvent({ ...event, eventFilter })}
                error={errorOf('configJson.eventFilter')}
                pathHint={type === 'agent_output' ? "Paths go into the run's output (text, steps…)." : "Paths go into the event's data (payload.action, agentId…)."}
              />
            </>
          )}
          <Switch label="Enabled" description="A disabled trigger does not fire; its schedule is paused" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
          {checked.length > 0 && !checked.every((c) => c.path) && <ApiErrorAlert error={new Error(checked.map((c) => c.message).join('; '))} title="Not accepted" />}
          <ApiErrorAlert error={save.error} />
          <FormButtons onCancel={onClose} submit={editing ? 'Save' : 'Create'} pending={save.isPending} disabled={!name.trim() || !variant} />
        </Stack>
      </form>
    </Modal>
  );
}

/** After a webhook trigger is created (or its token replaced): where to call, and the token, shown once. */
function CreatedHook({ trigger, url, onClose }: { trigger: Trigger; url: string; onClose: () => void }) {
  const token = (trigger.configJson as { secretToken: string }).secretToken;
  return (
    <Modal opened onClose={onClose} title={`${trigger.name}: its hook`} size="lg" centered>
      <Stack>
        {trigger.hookUrl && <CopyableUrl label="Hook URL" url={trigger.hookUrl} copyLabel="Copy hook URL" />}
        <ShownOnce label="Secret token" value={token} />
        <Text size="sm" c="dimmed">
          Callers POST any JSON to the hook URL with the header <code>X-Trigger-Token</code>; each call is a fire.
        </Text>
        <Group justify="flex-end">
          <Anchor component={Link} to={url} onClick={onClose}>
            Open the trigger
          </Anchor>
          <Button onClick={onClose}>Done</Button>
        </Group>
      </Stack>
    </Modal>
  );
}
