import { Button, Collapse, Group, Paper, Stack, Switch, Textarea, TextInput, UnstyledButton } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { useWrite } from '../../lib/mutations';
import { useAccountId, useAccountKey } from '../../session/account';

/**
 * Start a run of an agent, from its page's header (on every tab): its input (text, or JSON when asked) and,
 * to share a conversation, a thread — those two behind `Thread and JSON`, so the header stays one line.
 */
export function StartRunForm({ agentId, disabledReason }: { agentId: string; disabledReason?: string }) {
  const accountId = useAccountId();
  const navigate = useNavigate();
  const [input, setInput] = useState('');
  const [asJson, setAsJson] = useState(false);
  const [threadId, setThreadId] = useState('');
  const [jsonError, setJsonError] = useState<string>();
  const [options, { toggle }] = useDisclosure(false);
  const start = useWrite(
    async (body: { input?: unknown; threadId?: string }) =>
      unwrap(await client.POST('/api/agents/{id}/runs', { params: { path: { id: agentId } }, body: body as never })),
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
    <Paper withBorder p="sm" mb="md">
      <form onSubmit={submit} aria-label="Start a run">
        <Stack gap="xs">
          <Group align="flex-start" gap="sm" wrap="nowrap">
            <Textarea
              label="Input"
              placeholder="The user's message for a model run (Ctrl+Enter runs it)"
              autosize
              minRows={1}
              maxRows={8}
              style={{ flex: 1 }}
              value={input}
              error={jsonError}
              onChange={(e) => setInput(e.currentTarget.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) e.currentTarget.form?.requestSubmit();
              }}
            />
            <Button type="submit" mt={25} loading={start.isPending} disabled={Boolean(disabledReason)} title={disabledReason}>
              Run
            </Button>
          </Group>
          <UnstyledButton onClick={toggle} aria-expanded={options} fz="sm" c="dimmed" td="underline" w="fit-content">
            Thread and JSON
          </UnstyledButton>
          <Collapse in={options}>
            <Group align="flex-end">
              <TextInput label="Thread" description="Runs with the same thread share a conversation (optional)." value={threadId} onChange={(e) => setThreadId(e.currentTarget.value)} w={260} />
              <Switch label="Send the input as JSON" checked={asJson} onChange={(e) => setAsJson(e.currentTarget.checked)} mb={6} />
            </Group>
          </Collapse>
          <ApiErrorAlert error={start.error} />
        </Stack>
      </form>
    </Paper>
  );
}
