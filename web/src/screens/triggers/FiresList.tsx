import { Anchor, Badge, Code, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { useCursorList } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { PagedTimeline } from '../../components/PagedTimeline';
import { QueryState } from '../../components/states';
import { TemporalLink } from '../../components/TemporalLink';
import { TimelineEntry } from '../../components/Timeline';
import { formatDuration } from '../../lib/dates';
import { workflowIds } from '../../lib/temporal';
import { useAccountId, useAccountKey } from '../../session/account';
import { FireDeliveries } from './FireDeliveries';
import { triggerApi, type Fire, type TriggerScope } from './trigger-api';
import { FIRE_REASONS, FIRE_STATUS } from './trigger-labels';

const SOURCE_WORDS: Record<Fire['source'], string> = { schedule: 'schedule', manual: 'fired by hand', webhook: 'hook called', event: 'event' };

/**
 * A trigger's fire history, newest first, refreshed every 2 s so new fires appear without reloading: what
 * set each off, when (and how late for a schedule), what it became (skipped and throttled with their
 * reason), the run it started; opened, its payload and the deliveries that followed it.
 */
export function FiresList({ scope, triggerId }: { scope: TriggerScope; triggerId: string }) {
  const list = useCursorList(useAccountKey('triggers', triggerId, 'fires'), (cursor) => triggerApi.fires(scope, triggerId, cursor), { refetchInterval: 2_000 });
  return (
    <PagedTimeline list={list} noun="Fires" empty="A fire shows here the moment it is recorded: on its schedule, when its hook is called, on a matching event, or with Fire now.">
      {(fire) => <FireItem key={fire.id} fire={fire} scope={scope} triggerId={triggerId} />}
    </PagedTimeline>
  );
}

function FireItem({ fire, scope, triggerId }: { fire: Fire; scope: TriggerScope; triggerId: string }) {
  const accountId = useAccountId();
  const status = FIRE_STATUS[fire.status];
  const lag = fire.scheduledAt ? Date.parse(fire.firedAt) - Date.parse(fire.scheduledAt) : null;
  return (
    <TimelineEntry
      summary={
        <>
          <Badge variant="light" color={status.color}>
            {status.label}
          </Badge>
          <DateTime value={fire.firedAt} />
          <Text size="sm" c="dimmed">
            {lag !== null ? `on schedule for ${new Date(fire.scheduledAt!).toLocaleTimeString()}, recorded ${formatDuration(lag)} late` : SOURCE_WORDS[fire.source]}
          </Text>
        </>
      }
      actions={
        fire.runId && (
          <>
            <Anchor component={Link} to={`/w/${accountId}/runs/${fire.runId}`} size="sm">
              Open run
            </Anchor>
            <TemporalLink workflowId={workflowIds.run(fire.runId)}>Run in Temporal</TemporalLink>
          </>
        )
      }
      note={
        (fire.reason || status.why) && (
          <Text size="xs" c="dimmed" mt={4}>
            {fire.reason ? FIRE_REASONS[fire.reason] : status.why}
          </Text>
        )
      }
      opens={{ closed: 'Details', open: 'Hide details' }}
      toggleLabel={(open) => `${open ? 'Hide' : 'Show'} details of the fire at ${new Date(fire.firedAt).toLocaleString()}`}
      details={() => <FireDetails scope={scope} triggerId={triggerId} fireId={fire.id} />}
    />
  );
}

function FireDetails({ scope, triggerId, fireId }: { scope: TriggerScope; triggerId: string; fireId: string }) {
  const detail = useQuery({ queryKey: useAccountKey('triggers', triggerId, 'fires', fireId), queryFn: () => triggerApi.fireDetail(scope, triggerId, fireId) });
  const deliveries = useQuery({
    queryKey: useAccountKey('triggers', triggerId, 'fires', fireId, 'deliveries'),
    queryFn: () => triggerApi.fireDeliveries(scope, triggerId, fireId),
    refetchInterval: 3_000,
  });
  return (
    <Stack gap="xs" mt="sm">
      <QueryState query={detail} loadingLabel="Loading the fire">
        {(fire) => (
          <div>
            <Text size="sm" fw={500}>
              Payload
            </Text>
            <Code block>{fire.payload === null || fire.payload === undefined ? 'null' : JSON.stringify(fire.payload, null, 2)}</Code>
          </div>
        )}
      </QueryState>
      <div>
        <Text size="sm" fw={500}>
          Deliveries that followed
        </Text>
        <QueryState query={deliveries} loadingLabel="Loading deliveries">
          {(list) => <FireDeliveries deliveries={list} empty="None: no outgoing webhook subscribes to its events, or its run has not ended yet." />}
        </QueryState>
      </div>
    </Stack>
  );
}
