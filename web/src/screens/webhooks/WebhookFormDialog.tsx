import { Anchor, Button, Group, Modal, MultiSelect, PasswordInput, SegmentedControl, Stack, Switch, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { client } from '../../api/client';
import { ApiError, fieldOfMessage, unwrap } from '../../api/errors';
import { useComponentSchema, validateAgainst, type FieldError, type JsonSchema } from '../../api/openapi-schema';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { CopyableUrl } from '../../components/CopyableUrl';
import { FormButtons } from '../../components/FormButtons';
import { ShownOnce } from '../../components/ShownOnce';
import { useIntentKey, useWrite } from '../../lib/mutations';
import { useAccountId, useAccountKey } from '../../session/account';
import { useCan } from '../../session/permissions';
import { generateSigningSecret, type Webhook } from './webhook-api';

type Direction = 'outgoing' | 'incoming';
const MASKED = /^•+/;

/** The variant of CreateWebhook for a direction (the API documents one per direction). */
function variantFor(schema: JsonSchema | undefined, direction: Direction): JsonSchema | undefined {
  return (schema?.anyOf ?? schema?.oneOf)?.find((v) => v.title === direction);
}

/**
 * Create an outgoing webhook (a target URL and the events it gets) or an incoming one (the API makes its
 * URL), or edit one. Options come from the API's schema (CreateWebhook / UpdateWebhook) and the body is
 * checked against it before sending; the API's 400 shows on the field it names. A signing secret may be
 * generated here (Standard Webhooks' whsec_ form); it is shown in full once, after the request that sets it.
 */
export function WebhookFormDialog({ webhook, onClose }: { webhook?: Webhook; onClose: () => void }) {
  const accountId = useAccountId();
  const navigate = useNavigate();
  const editing = Boolean(webhook);
  const create = useComponentSchema('CreateWebhook');
  const update = useComponentSchema('UpdateWebhook');
  const [direction, setDirection] = useState<Direction>(webhook?.direction ?? 'outgoing');
  const [name, setName] = useState(webhook?.name ?? '');
  const [url, setUrl] = useState(webhook?.direction === 'outgoing' ? webhook.url : '');
  const [events, setEvents] = useState<string[]>(webhook?.events ?? ['*']);
  const [enabled, setEnabled] = useState(webhook?.enabled ?? true);
  const [secret, setSecret] = useState('');
  const [secretMode, setSecretMode] = useState<'keep' | 'replace' | 'remove'>('keep');
  const [checked, setChecked] = useState<FieldError[]>([]);
  const [saved, setSaved] = useState<Webhook | null>(null);
  const idempotencyKey = useIntentKey();
  const mayWrite = useCan('write');
  const variant = variantFor(create.schema, direction);
  const eventOptions = ((variant?.properties?.events?.items?.enum ?? []) as string[]).map(String);

  const save = useWrite(
    async (body: Record<string, unknown>) =>
      webhook
        ? unwrap(await client.PATCH('/api/webhooks/{id}', { params: { path: { id: webhook.id } }, body }))
        : unwrap(await client.POST('/api/webhooks', { body: body as never, headers: { 'idempotency-key': idempotencyKey } })),
    {
      invalidates: [useAccountKey('webhooks')],
      success: (w) => (editing ? `Saved ${w.name}` : `Created ${w.name}`),
      onSuccess: (w) => {
        const shown = (w.secret && !MASKED.test(w.secret)) || (!editing && w.direction === 'incoming');
        if (shown) setSaved(w);
        else if (!editing) navigate(`/w/${accountId}/webhooks/${w.id}`);
        else onClose();
      },
    },
  );

  const apiField = save.error instanceof ApiError && save.error.status === 400 ? fieldOfMessage(save.error.message) : null;
  const errorOf = (field: string) =>
    checked.find((e) => e.path === field || e.path.startsWith(`${field}.`))?.message ??
    (apiField === field || apiField?.startsWith(`${field}.`) ? (save.error as ApiError).message.replace(/^body\.[^:]+: /, '') : undefined);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const body: Record<string, unknown> = { name: name.trim(), enabled, events };
    if (!editing) body.direction = direction;
    if (direction === 'outgoing') body.url = url.trim();
    if (!editing && secret) body.secret = secret;
    if (editing && secretMode === 'replace') body.secret = secret;
    if (editing && secretMode === 'remove') body.secret = null;
    const schema = editing ? update.schema : variant;
    const problems = schema ? validateAgainst(schema, body) : [];
    setChecked(problems);
    if (!problems.length) save.mutate(body);
  };

  if (saved) return <SavedWebhook webhook={saved} accountId={accountId} onClose={onClose} />;

  const secretInput = (
    <PasswordInput
      label={editing ? 'New signing secret' : 'Signing secret'}
      description="Deliveries are signed with it (Standard Webhooks headers); receivers verify them. 8–256 characters, or whsec_ and base64."
      value={secret}
      onChange={(e) => setSecret(e.currentTarget.value)}
      error={errorOf('secret')}
      rightSectionWidth={90}
      rightSection={
        <Button size="compact-xs" variant="light" onClick={() => setSecret(generateSigningSecret())}>
          Generate
        </Button>
      }
    />
  );

  return (
    <Modal opened onClose={onClose} title={editing ? `Edit ${webhook!.name}` : 'New webhook'} size="lg" centered>
      <form onSubmit={submit} noValidate>
        <Stack>
          <ApiErrorAlert error={create.error ?? update.error} />
          {!mayWrite && <Text size="sm" fw={500}>Your role here is read-only: the API will refuse this.</Text>}
          {!editing && (
            <SegmentedControl
              aria-label="Direction"
              data={[
                { value: 'outgoing', label: 'Outgoing: send events to my endpoint' },
                { value: 'incoming', label: 'Incoming: receive requests as events' },
              ]}
              value={direction}
              onChange={(value) => {
                setDirection(value as Direction);
                setEvents(value === 'incoming' ? ['webhook.received'] : ['*']);
              }}
              fullWidth
            />
          )}
          <TextInput label="Name" required maxLength={200} value={name} onChange={(e) => setName(e.currentTarget.value)} error={errorOf('name')} data-autofocus />
          {direction === 'outgoing' && (
            <TextInput label="Endpoint URL" required type="url" placeholder="https://example.com/hooks/agent-platform" value={url} onChange={(e) => setUrl(e.currentTarget.value)} error={errorOf('url')} />
          )}
          <MultiSelect
            label="Events"
            description={direction === 'outgoing' ? 'The event types delivered; * for every type' : 'The event types each received request is emitted as'}
            data={eventOptions.length ? eventOptions : events}
            value={events}
            onChange={setEvents}
            error={errorOf('events')}
            searchable
          />
          {editing ? (
            <Stack gap={6}>
              <SegmentedControl
                aria-label="Signing secret"
                size="xs"
                data={[
                  { value: 'keep', label: webhook!.secret ? `Keep ${webhook!.secret}` : 'No secret' },
                  { value: 'replace', label: webhook!.secret ? 'Replace it' : 'Set one' },
                  ...(webhook!.secret ? [{ value: 'remove', label: 'Remove it' }] : []),
                ]}
                value={secretMode}
                onChange={(value) => setSecretMode(value as typeof secretMode)}
              />
              {secretMode === 'replace' && secretInput}
            </Stack>
          ) : (
            secretInput
          )}
          <Switch label="Enabled" description="A disabled webhook delivers nothing (its pending deliveries are cancelled) or refuses requests" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
          <ApiErrorAlert error={save.error} />
          <FormButtons onCancel={onClose} submit={editing ? 'Save' : 'Create'} pending={save.isPending} disabled={!name.trim() || !(editing ? update.schema : variant)} />
        </Stack>
      </form>
    </Modal>
  );
}

/** After the request that set them: the signing secret in full, once, and an incoming webhook's URL. */
function SavedWebhook({ webhook, accountId, onClose }: { webhook: Webhook; accountId: string; onClose: () => void }) {
  return (
    <Modal opened onClose={onClose} title={`${webhook.name} is ready`} size="lg" centered>
      <Stack>
        {webhook.direction === 'incoming' && <CopyableUrl label="Its URL: senders POST JSON here" url={webhook.url} copyLabel="Copy webhook URL" />}
        {webhook.secret && !MASKED.test(webhook.secret) && <ShownOnce label="Signing secret" value={webhook.secret} />}
        <Group justify="flex-end">
          <Anchor component={Link} to={`/w/${accountId}/webhooks/${webhook.id}`} onClick={onClose}>
            Open the webhook
          </Anchor>
          <Button onClick={onClose}>Done</Button>
        </Group>
      </Stack>
    </Modal>
  );
}
