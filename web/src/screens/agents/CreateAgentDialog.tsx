import { Button, Group, Modal, NativeSelect, Stack, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { useIntentKey, useWrite } from '../../lib/mutations';
import { useAccountId, useAccountKey, useAccountSummary, useSettings } from '../../session/account';
import { AGENT_STATUSES, type AgentStatus } from './agent-status';

/** New agent: a name and a status; what it costs and what the balance is, before anything is charged. */
export function CreateAgentDialog({ onClose }: { onClose: () => void }) {
  const accountId = useAccountId();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [status, setStatus] = useState<AgentStatus>('draft');
  const idempotencyKey = useIntentKey();
  const cost = useSettings().data?.agentCreateCost;
  const balance = useAccountSummary().data?.balance;
  const create = useWrite(
    async () => unwrap(await client.POST('/api/agents', { body: { name: name.trim(), status }, headers: { 'idempotency-key': idempotencyKey } })),
    {
      invalidates: [useAccountKey('agents'), useAccountKey('summary')],
      success: (agent) => `Created ${agent.name}`,
      onSuccess: (agent) => navigate(`/w/${accountId}/agents/${agent.id}/overview`),
    },
  );
  const free = status === 'template';
  const short = !free && cost !== undefined && balance !== undefined && balance < cost;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(undefined);
  };

  return (
    <Modal opened onClose={onClose} title="New agent" centered>
      <form onSubmit={submit}>
        <Stack>
          <TextInput label="Name" required maxLength={200} value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
          <NativeSelect
            label="Status"
            description="Draft and paused agents do not run; active ones do; a template is a free starting point."
            value={status}
            onChange={(e) => setStatus(e.currentTarget.value as AgentStatus)}
            data={AGENT_STATUSES.map((s) => ({ value: s, label: s }))}
          />
          <Text size="sm" c={short ? 'orange' : 'dimmed'} aria-live="polite">
            {free
              ? 'Templates are free.'
              : cost === undefined || balance === undefined
                ? 'Checking the price and the balance…'
                : `Creating it costs ${cost.toLocaleString()} units; the balance is ${balance.toLocaleString()} units${short ? ' — not enough' : ''}.`}
          </Text>
          <ApiErrorAlert error={create.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending} disabled={!name.trim()}>
              Create
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
