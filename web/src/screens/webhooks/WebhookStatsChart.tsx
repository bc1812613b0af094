import '@mantine/charts/styles.css';
import { LineChart } from '@mantine/charts';
import { Group, SegmentedControl, SimpleGrid, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { QueryState } from '../../components/states';
import { useAccountKey } from '../../session/account';
import type { StatsSeries } from './webhook-api';

type Window = StatsSeries['window'];
const WINDOWS: Array<{ value: Window; label: string }> = [
  { value: '1h', label: 'Hour' },
  { value: '24h', label: 'Day' },
  { value: '7d', label: 'Week' },
];

function tick(at: string, span: Window): string {
  const date = new Date(at);
  return span === '7d' ? date.toLocaleString(undefined, { weekday: 'short', hour: '2-digit' }) : date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/**
 * The endpoint's success rate and attempt latency over the last hour, day or week
 * (GET /api/webhooks/:id/stats/series), refreshed every 10 s. Loaded with the webhook's page on demand:
 * the chart library is not part of the console's first load.
 */
export default function WebhookStatsChart({ webhookId, createdAt }: { webhookId: string; createdAt: string }) {
  // A webhook younger than an hour has all of its attempts in the last hour: show that first.
  const [span, setSpan] = useState<Window>(() => (Date.now() - Date.parse(createdAt) < 3_600_000 ? '1h' : '24h'));
  const series = useQuery({
    queryKey: useAccountKey('webhooks', webhookId, 'series', span),
    queryFn: async () => unwrap(await client.GET('/api/webhooks/{id}/stats/series', { params: { path: { id: webhookId }, query: { window: span } } })),
    refetchInterval: 10_000,
  });
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Text size="sm" c="dimmed">
          Attempts over time, in your time zone (empty buckets: no attempt)
        </Text>
        <SegmentedControl aria-label="Chart window" size="xs" data={WINDOWS} value={span} onChange={(v) => setSpan(v as Window)} />
      </Group>
      <QueryState query={series} loadingLabel="Loading the chart">
        {(s) => {
          const data = s.buckets.map((b) => ({
            at: tick(b.at, s.window),
            'Success rate (%)': b.successRate === null ? null : Math.round(b.successRate * 1000) / 10,
            'p50 latency (ms)': b.attemptLatencyMs.p50,
            'p99 latency (ms)': b.attemptLatencyMs.p99,
            Attempts: b.attempts.succeeded + b.attempts.failed,
          }));
          const total = s.buckets.reduce((n, b) => n + b.attempts.succeeded + b.attempts.failed, 0);
          return (
            <>
              <Text size="sm" aria-live="polite">
                {total} attempt{total === 1 ? '' : 's'} in the window.
              </Text>
              <SimpleGrid cols={{ base: 1, md: 2 }}>
                <div role="img" aria-label={`Success rate per ${s.bucketSeconds >= 3600 ? `${s.bucketSeconds / 3600} h` : 'minute'} over the ${WINDOWS.find((w) => w.value === s.window)?.label.toLowerCase()}`}>
                  <LineChart h={200} data={data} dataKey="at" series={[{ name: 'Success rate (%)', color: 'teal.8' }]} yAxisProps={{ domain: [0, 100] }} connectNulls={false} withLegend curveType="linear" />
                </div>
                <div role="img" aria-label="Attempt latency p50 and p99 in ms">
                  <LineChart
                    h={200}
                    data={data}
                    dataKey="at"
                    series={[
                      { name: 'p50 latency (ms)', color: 'blue.8' },
                      { name: 'p99 latency (ms)', color: 'orange.8' },
                    ]}
                    connectNulls={false}
                    withLegend
                    curveType="linear"
                  />
                </div>
              </SimpleGrid>
            </>
          );
        }}
      </QueryState>
    </Stack>
  );
}
