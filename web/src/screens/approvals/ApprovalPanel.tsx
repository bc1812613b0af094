import { Button, Group, JsonInput, Paper, SimpleGrid, Stack, Text, Textarea, Title } from '@mantine/core';
import { useId, useState } from 'react';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { DateTime } from '../../components/DateTime';
import { useWrite } from '../../lib/mutations';
import { useAccountKey } from '../../session/account';
import { Can, useCan } from '../../session/permissions';
import { callLabel, useToolName, type Approval } from './approval-api';

const pretty = (value: unknown) => JSON.stringify(value ?? {}, null, 2);

/** The textbox's JSON when it is an object (what a tool's arguments are), else null. */
function argumentsObject(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * A tool call the run waits on (docs/api.md § Approvals): a group named `Approval` with what the model asked
 * to call, its arguments in a textbox `Arguments` (JSON, editable: an approve sends them when changed, and the
 * API checks them against the tool's parameters), a textbox `Comment`, and buttons `Approve` and `Reject` for
 * a role that may run agents (a viewer sees the approval, not the buttons). The API's refusal shows in an alert.
 */
export function ApprovalPanel({ approval, runKey }: { approval: Approval; runKey: unknown[] }) {
  const headingId = useId();
  const canDecide = useCan('write');
  const toolName = useToolName(approval.toolId);
  const [args, setArgs] = useState(() => pretty(approval.arguments));
  const [comment, setComment] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const decide = useWrite(
    async (decision: 'approve' | 'reject') => {
      const edited = decision === 'approve' && args.trim() !== pretty(approval.arguments).trim() ? argumentsObject(args) : undefined;
      const body = { decision, ...(edited ? { arguments: edited } : {}), ...(comment.trim() ? { comment: comment.trim() } : {}) };
      return unwrap(await client.POST('/api/approvals/{id}/decision', { params: { path: { id: approval.id } }, body }));
    },
    {
      invalidates: [useAccountKey('approvals'), runKey],
      success: (a) => (a.status === 'approved' ? 'Approved: the run goes on with the call' : 'Rejected: the model is told, and the run goes on'),
    },
  );
  const submit = (decision: 'approve' | 'reject') => {
    if (decision === 'approve' && !argumentsObject(args)) {
      setInvalid('Arguments: must be a JSON object, e.g. { "amount": 5 }');
      return;
    }
    setInvalid(null);
    decide.mutate(decision);
  };
  const decided = decide.data;

  return (
    <Paper withBorder p="md" role="group" aria-labelledby={headingId} style={{ borderColor: 'var(--mantine-color-orange-6)' }}>
      <Stack gap="sm">
        <Title order={2} size="h4" id={headingId}>
          Approval
        </Title>
        <Text size="sm">
          The model asked to call <strong>{callLabel(approval, toolName)}</strong>. Nothing was called yet: the run waits for a person's decision.
        </Text>
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <div>
            <Text size="xs" c="dimmed" fw={600}>
              Requested
            </Text>
            <DateTime value={approval.requestedAt} />
          </div>
          <div>
            <Text size="xs" c="dimmed" fw={600}>
              Expires (then treated as a rejection)
            </Text>
            <DateTime value={approval.expiresAt} />
          </div>
        </SimpleGrid>
        <JsonInput
          label="Arguments"
          description={canDecide ? 'As the model wrote them; edit them to approve the call with yours (checked against the tool’s parameters).' : 'As the model wrote them.'}
          autosize
          minRows={3}
          maxRows={16}
          readOnly={!canDecide || Boolean(decided)}
          value={args}
          onChange={setArgs}
          error={invalid ?? undefined}
        />
        <Can right="write">
          <Textarea
            label="Comment"
            description="Optional. On a rejection the model reads it as the tool’s result."
            autosize
            minRows={2}
            readOnly={Boolean(decided)}
            value={comment}
            onChange={(e) => setComment(e.currentTarget.value)}
          />
        </Can>
        <ApiErrorAlert error={decide.error} />
        {decided ? (
          <Text size="sm" role="status">
            {decided.status === 'approved' ? 'Approved' : 'Rejected'}: the run goes on.
          </Text>
        ) : (
          <Can right="write" otherwise={<Text size="sm" c="dimmed">A member who may run agents decides it.</Text>}>
            <Group>
              <Button loading={decide.isPending && decide.variables === 'approve'} disabled={decide.isPending} onClick={() => submit('approve')}>
                Approve
              </Button>
              <Button color="red" variant="light" loading={decide.isPending && decide.variables === 'reject'} disabled={decide.isPending} onClick={() => submit('reject')}>
                Reject
              </Button>
            </Group>
          </Can>
        )}
      </Stack>
    </Paper>
  );
}
