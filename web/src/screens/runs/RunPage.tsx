import { Anchor, Badge, Code, Group, Loader, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { Link, useParams } from 'react-router';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { ConfirmButton } from '../../components/ConfirmButton';
import { DateTime } from '../../components/DateTime';
import { JsonBlock } from '../../components/JsonBlock';
import { PageHeader } from '../../components/PageHeader';
import { EmptyState, QueryState } from '../../components/states';
import { TemporalLink } from '../../components/TemporalLink';
import { formatDuration } from '../../lib/dates';
import { useWrite } from '../../lib/mutations';
import { ApprovalPanel } from '../approvals/ApprovalPanel';
import { workflowIds } from '../../lib/temporal';
import { useAccountId, useAccountKey } from '../../session/account';
import { Can, useCan } from '../../session/permissions';
import { CANCELLED_ERROR, isFinished, RunStatusBadge, usageOf } from './run-status';
import { LiveStepText } from './LiveStepText';
import { RerunButton } from './RerunButton';
import { RerunLinks } from './RerunLinks';
import type { RunWithReruns } from './rerun';
import { StepItem } from './StepItem';
import { ThreadMessages } from './ThreadMessages';
import { useRunEvents } from './use-run-events';

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" fw={600}>
        {label}
      </Text>
      <div>{children}</div>
    </div>
  );
}

/**
 * A run: its status and facts, what it waits for (an `Approval` group per pending approval, from the stream's
 * `waiting` events), its steps appearing live as they finish (SSE), its output, and its thread.
 */
export function RunPage() {
  const { runId = '' } = useParams();
  const accountId = useAccountId();
  const canWrite = useCan('write');
  const events = useRunEvents(runId, accountId);
  const runKey = useAccountKey('runs', runId);
  const query = useQuery({
    queryKey: runKey,
    queryFn: async () => unwrap(await client.GET('/api/runs/{id}', { params: { path: { id: runId } } })),
    // The stream says when it is done; until then (or if the stream is refused) the run is read again now and then.
    refetchInterval: (q) => (events.run || (q.state.data && isFinished(q.state.data.status)) ? false : 3_000),
  });
  // When the stream is refused (e.g. too many open at once: 429), the steps are read instead, every 3 s until the run ends.
  const polledSteps = useQuery({
    queryKey: useAccountKey('runs', runId, 'steps'),
    enabled: Boolean(events.error),
    queryFn: async () => unwrap(await client.GET('/api/runs/{id}/steps', { params: { path: { id: runId }, query: { limit: 200 } } })),
    refetchInterval: (q) => (query.data && isFinished(query.data.status) && q.state.dataUpdatedAt > query.dataUpdatedAt ? false : 3_000),
  });
  const steps = events.error ? (polledSteps.data ?? []) : events.steps;
  // Without the stream, a waiting run's approvals are read (again every 3 s, while it waits).
  const polledApprovals = useQuery({
    queryKey: useAccountKey('approvals', 'run', runId),
    enabled: Boolean(events.error) && query.data?.status === 'waiting',
    queryFn: async () => unwrap(await client.GET('/api/runs/{id}/approvals', { params: { path: { id: runId } } })),
    refetchInterval: 3_000,
  });
  const waiting = events.error ? (polledApprovals.data ?? []).filter((a) => a.status === 'pending') : events.waiting;
  // The run's status follows what the stream says: waiting when an approval came, running again once it is decided.
  const queryClient = useQueryClient();
  const waitingIds = events.waiting.map((a) => a.id).join();
  const seenWaiting = useRef(waitingIds);
  useEffect(() => {
    if (seenWaiting.current === waitingIds) return;
    seenWaiting.current = waitingIds;
    void queryClient.invalidateQueries({ queryKey: runKey });
  }, [waitingIds, queryClient, runKey]);
  // Text arriving says the run is running: read it again then, not up to 3 s later (it showed `queued` while writing).
  const drafting = events.draft?.stepIndex;
  useEffect(() => {
    if (drafting !== undefined) void queryClient.invalidateQueries({ queryKey: runKey });
  }, [drafting, queryClient, runKey]);
  const cancel = useWrite(async () => unwrap(await client.POST('/api/runs/{id}/cancel', { params: { path: { id: runId } } })), {
    invalidates: [runKey],
    success: (r) => (isFinished(r.status) ? 'The run was cancelled' : 'Cancelling: the run stops after its step in flight is torn down'),
  });
  const agent = useQuery({
    queryKey: useAccountKey('agents', query.data?.agentId),
    enabled: Boolean(query.data?.agentId),
    queryFn: async () => unwrap(await client.GET('/api/agents/{id}', { params: { path: { id: query.data!.agentId } } })),
    retry: false,
  });

  return (
    <QueryState query={query} loadingLabel="Loading the run">
      {(fetched) => {
        // The stream's `done` run has rerunOf; only GET /api/runs/:id has the reruns.
        const run: RunWithReruns = { ...fetched, ...(events.run ?? {}) };
        const ended = isFinished(run.status);
        const usage = usageOf(run);
        const duration = run.startedAt ? new Date(run.finishedAt ?? Date.now()).getTime() - new Date(run.startedAt).getTime() : null;
        const text = (run.output as { text?: string } | null)?.text;
        return (
          <Stack>
            <PageHeader
              crumbs={[
                { label: 'All runs', to: `/w/${accountId}/runs` },
                ...(agent.data ? [{ label: agent.data.name, to: `/w/${accountId}/agents/${run.agentId}/runs` }] : []),
              ]}
              title={
                <Group gap="sm">
                  Run of {agent.data?.name ?? 'an agent'}
                  <Text component="span" size="lg" aria-label="Status">
                    <RunStatusBadge status={run.status} />
                  </Text>
                  {events.live && (
                    <Group gap={4}>
                      <Loader size="xs" aria-hidden="true" />
                      <Text size="sm" c="dimmed">
                        live
                      </Text>
                    </Group>
                  )}
                </Group>
              }
              actions={
                <>
                  {!isFinished(run.status) && (
                    <Can right="write">
                      <ConfirmButton
                        title="Cancel this run?"
                        message="Its step in flight is stopped and no further step is made; the run ends failed, with agent.failed, as the error “the run was cancelled”."
                        confirmLabel="Cancel run"
                        dismissLabel="Keep running"
                        onConfirm={() => cancel.mutate(undefined)}
                        pending={cancel.isPending}
                        error={cancel.error}
                      >
                        Cancel run
                      </ConfirmButton>
                    </Can>
                  )}
                  <TemporalLink workflowId={workflowIds.run(run.id)} />
                </>
              }
            />
            <Paper withBorder p="md">
              <SimpleGrid cols={{ base: 2, md: 5 }}>
                <Fact label="Status">
                  <Text>{run.status}</Text>
                </Fact>
                <Fact label="Created">
                  <DateTime value={run.createdAt} />
                </Fact>
                <Fact label="Duration">{formatDuration(duration)}</Fact>
                <Fact label="Executor">{run.executor ?? '—'}</Fact>
                <Fact label="Usage">
                  {usage ? `${usage.promptTokens ?? 0} + ${usage.completionTokens ?? 0} tokens${usage.toolCalls !== undefined ? `, ${usage.toolCalls} tool calls` : ''}` : '—'}
                </Fact>
                <Fact label="Started by">
                  {run.triggerId ? (
                    <Anchor component={Link} to={`/w/${accountId}/triggers/${run.triggerId}`}>
                      a trigger
                    </Anchor>
                  ) : (
                    'the API or console'
                  )}
                </Fact>
                <Fact label="Thread">{run.threadId ? <Code>{run.threadId}</Code> : '—'}</Fact>
                <Fact label="Chain depth">{run.chainDepth}</Fact>
              </SimpleGrid>
            </Paper>
            <RerunLinks run={run} />
            {run.error === CANCELLED_ERROR ? (
              <ApiErrorAlert error={new Error('It was stopped on request: its step in flight did not finish, and no further step was made.')} title="The run was cancelled" />
            ) : (
              run.error && <ApiErrorAlert error={new Error(run.error)} title="The run failed" />
            )}
            {text !== undefined && (
              <Paper withBorder p="md">
                <Title order={2} size="h4" mb="xs">
                  Answer
                </Title>
                <Text style={{ whiteSpace: 'pre-wrap' }}>{text}</Text>
              </Paper>
            )}
            {run.status !== 'succeeded' && run.status !== 'failed' && waiting.map((approval) => <ApprovalPanel key={approval.id} approval={approval} runKey={runKey} />)}
            <Paper withBorder p="md">
              <JsonBlock label="Input" value={run.input} />
            </Paper>
            <Group justify="space-between">
              <Title order={2} size="h4">
                Steps
              </Title>
              {!isFinished(run.status) && <Badge variant="dot">{run.status === 'queued' ? 'waiting for a slot' : run.status === 'waiting' ? 'waiting for a decision' : 'steps appear as they finish'}</Badge>}
            </Group>
            <ApiErrorAlert error={events.error} title="Live updates are off: the steps are read every few seconds instead" />
            {steps.length === 0 && isFinished(run.status) && !events.live ? (
              <EmptyState title="No steps">This run made no model or tool call.</EmptyState>
            ) : (
              <Stack component="ol" aria-label="Steps" gap="sm" p={0} m={0} style={{ listStyle: 'none' }}>
                {steps.map((step) => (
                  <StepItem key={step.index} step={step} action={ended && canWrite ? <RerunButton runId={run.id} stepIndex={step.index} /> : undefined} />
                ))}
              </Stack>
            )}
            {!events.error && events.draft && <LiveStepText live={events.liveText} draft={events.draft} />}
            {run.threadId && <ThreadMessages agentId={run.agentId} threadId={run.threadId} live={!isFinished(run.status)} />}
            {run.output !== null && (
              <Paper withBorder p="md">
                <JsonBlock label="Output" value={run.output} maxHeight={400} />
              </Paper>
            )}
          </Stack>
        );
      }}
    </QueryState>
  );
}
