import { Anchor, Badge, Button, Center, Group, SegmentedControl, Stack, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { DateTime } from '../../components/DateTime';
import { EmptyState, QueryState } from '../../components/states';
import { TemporalLink } from '../../components/TemporalLink';
import { formatDuration } from '../../lib/dates';
import { workflowIds } from '../../lib/temporal';
import { useAccountId, useAccountKey } from '../../session/account';
import { FireDeliveries } from './FireDeliveries';
import { triggerApi, type PreviewTime, type TriggerScope } from './trigger-api';
import { EXPECTED_STATUS, RUN_STATUS_COLOR } from './trigger-labels';

const WINDOWS = [
  { value: '5m', label: '5 minutes', ms: 5 * 60_000 },
  { value: '1h', label: 'Hour', ms: 3_600_000 },
  { value: '6h', label: '6 hours', ms: 6 * 3_600_000 },
  { value: '24h', label: 'Day', ms: 86_400_000 },
  { value: '7d', label: 'Week', ms: 7 * 86_400_000 },
] as const;
/** The API's largest page of a timeline (docs/api.md § Triggers). */
const PAGE = 200;
/** Rows drawn at first; more on request (a per-second schedule has 300 in five minutes). */
const SHOWN = 60;

/** A window showing about twenty fire times of this schedule (its period from the next fire times). */
function defaultWindow(next: PreviewTime[] | undefined): string {
  if (!next || next.length < 2) return '24h';
  const period = (Date.parse(next.at(-1)!.at) - Date.parse(next[0]!.at)) / (next.length - 1);
  return (WINDOWS.find((w) => w.ms >= period * 20) ?? WINDOWS.at(-1)!).value;
}

/**
 * What no single view elsewhere shows: each time the schedule should have fired over a window, newest
 * first, and what happened — fired, missed, throttled or skipped, with the reason — the run it started with
 * its status now, and that fire's and run's deliveries, each linked. One request per refresh
 * (GET …/timeline), every 5 s.
 */
export function TriggerTimeline({ scope, triggerId, createdAt, next }: { scope: TriggerScope; triggerId: string; createdAt: string; next: PreviewTime[] | undefined }) {
  const accountId = useAccountId();
  const [params, setParams] = useSearchParams();
  const windowValue = params.get('window') ?? defaultWindow(next);
  const span = WINDOWS.find((w) => w.value === windowValue) ?? WINDOWS[3];
  const [shown, setShown] = useState(SHOWN);
  const timeline = useQuery({
    queryKey: useAccountKey('triggers', triggerId, 'timeline', span.value),
    // Not before the trigger existed: those times are all "before it existed".
    queryFn: () => {
      const now = Date.now();
      const from = Math.min(Math.max(now - span.ms, Date.parse(createdAt)), now - 1000);
      return triggerApi.timeline(scope, triggerId, { from: new Date(from).toISOString(), limit: PAGE });
    },
    refetchInterval: 5_000,
  });
  return (
    <Stack gap="sm">
      <Group justify="space-between" wrap="wrap">
        <Text size="sm" c="dimmed" maw={640}>
          Every time the schedule should have fired in the last {span.label.toLowerCase()}, newest first, with what became of it. Times are yours; the
          trigger&apos;s own wall clock is under each.
        </Text>
        <SegmentedControl
          aria-label="Timeline window"
          size="xs"
          data={WINDOWS.map((w) => ({ value: w.value, label: w.label }))}
          value={span.value}
          onChange={(value) => setParams((p) => { const n = new URLSearchParams(p); n.set('window', value); return n; }, { replace: true })}
        />
      </Group>
      <QueryState query={timeline} loadingLabel="Loading the timeline">
        {(page) =>
          page.items.length === 0 ? (
            <EmptyState title="No expected fire times in this window">The schedule had no time to fire in the window (or the trigger did not exist yet). Choose a longer window.</EmptyState>
          ) : (
            <>
              {page.next && (
                <Text size="sm" c="orange">
                  The window holds more than {PAGE} times: these are its earliest {PAGE}. Choose a shorter window to see the latest.
                </Text>
              )}
              <Table.ScrollContainer minWidth={760}>
                <Table verticalSpacing="xs" aria-label="Timeline" striped>
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Expected at</Table.Th>
                      <Table.Th>What happened</Table.Th>
                      <Table.Th>Run</Table.Th>
                      <Table.Th>Deliveries</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {[...page.items].reverse().slice(0, shown).map((entry) => {
                      const status = EXPECTED_STATUS[entry.status];
                      return (
                        <Table.Tr key={entry.scheduledAt}>
                          <Table.Td>
                            <DateTime value={entry.scheduledAt} />
                            <Text size="xs" c="dimmed" ff="monospace">
                              {entry.localTime}
                            </Text>
                          </Table.Td>
                          <Table.Td>
                            <Badge variant="light" color={status.color}>
                              {status.label}
                            </Badge>
                            <Text size="xs" c="dimmed">
                              {entry.lagMs !== null ? `recorded ${formatDuration(entry.lagMs)} late` : status.why}
                            </Text>
                          </Table.Td>
                          <Table.Td>
                            {entry.runId ? (
                              <Stack gap={2}>
                                <Group gap={6}>
                                  <Anchor component={Link} to={`/w/${accountId}/runs/${entry.runId}`} size="sm">
                                    Run
                                  </Anchor>
                                  {entry.runStatus && (
                                    <Badge size="sm" variant="light" color={RUN_STATUS_COLOR[entry.runStatus]}>
                                      {entry.runStatus}
                                    </Badge>
                                  )}
                                </Group>
                                <TemporalLink workflowId={workflowIds.run(entry.runId)}>Temporal</TemporalLink>
                              </Stack>
                            ) : (
                              <Text size="xs" c="dimmed">
                                —
                              </Text>
                            )}
                          </Table.Td>
                          <Table.Td>{entry.fireId ? <FireDeliveries deliveries={entry.deliveries} empty="none" /> : null}</Table.Td>
                        </Table.Tr>
                      );
                    })}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
              {page.items.length > shown && (
                <Center>
                  <Button variant="default" onClick={() => setShown((n) => n + SHOWN * 2)}>
                    Show earlier times ({page.items.length - shown} more)
                  </Button>
                </Center>
              )}
            </>
          )
        }
      </QueryState>
    </Stack>
  );
}
