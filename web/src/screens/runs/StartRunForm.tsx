import { Button, Group, Paper, Stack, Switch, Textarea, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { useWrite } from '../../lib/mutations';
import { useAccountId, useAccountKey } from '../../session/account';

/** Start a run of an agent: its input (text, or JSON when asked) and, to share a conversation, a thread. */
export function StartRunForm({ agentId, disabledReason }: { agentId: string; disabledReason?: string }) {
  const accountId = useAccountId();
  const navigate = useNavigate();
  const [input, setInput] = useState('');
  const [asJson, setAsJson] = useState(false);
  const [threadId, setThreadId] = useState('');
  const [jsonError, setJsonError] = useState<string>();
  const start = useWrite(
    async (body: { input?: unknown; threadId?: string }) =>
      unwrap(await client.POST('/api/agents/{id}/runs', { params: { path: { id: agentId } }, body: body as never})),
    { invalidates: [useAccountKey('runs'), useAccountKey('agents', agentId, 'runs')], onSuccess: (run) => navigate(`/w/${accountId}/runs/${run.id}`) },
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let value: unknown = input;
    if (asJson) {
      try {
        value = JSON.parse(input);
      } catch {
        return setJsonError('Not valid JSON');
      }
    }
    setJsonError(undefined);
    start.mutate({ ...(input.trim() || asJson ? { input: value } : {}), ...(threadId.trim() ? { threadId: threadId.trim() } : {}) });
  };
  return (
    <Paper withBorder p="md">
      <form onSubmit={submit} aria-label="Start a run">
        <Stack gap="sm">
          <Textarea
            label="Input"
            description="The user's message for a model run; custom tools fill their body template from it."
            autosize
            minRows={2}
            value={input}
            error={jsonError}
            onChange={(e) => setInput(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) e.currentTarget.form?.requestSubmit();
            }}
          />
          <Group align="flex-end" justify="space-between">
            <Group align="flex-end">
              <TextInput label="Thread" description="Runs with the same thread share a conversation (optional)." value={threadId} onChange={(e) => setThreadId(e.currentTarget.value)} w={260} />
              <Switch label="Send the input as JSON" checked={asJson} onChange={(e) => setAsJson(e.currentTarget.checked)} mb={6} />
            </Group>
            <Button type="submit" loading={start.isPending} disabled={Boolean(disabledReason)} title={disabledReason}>
              Run
            </Button>
          </Group>
          <ApiErrorAlert error={start.error} />
        </Stack>
      </form>
    </Paper>
  );
}
