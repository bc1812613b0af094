import { Badge, Group, Paper, SegmentedControl, SimpleGrid, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { PageHeader } from '../../components/PageHeader';
import { EmptyState, Loading, QueryState } from '../../components/states';
import { useAccountKey, useAccountSummary } from '../../session/account';

const BalanceChart = lazy(() => import('./BalanceChart'));
const UsageChart = lazy(() => import('./UsageChart'));

const RANGES = [
  { value: '7', label: '7 days' },
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
];

/** A UTC day `daysAgo` before today, as the API names days (YYYY-MM-DD). */
const utcDay = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);

const REASONS: Record<string, string> = {
  initial_grant: 'Starting balance',
  'agent.create': 'Agent created',
  'agent.from_template': 'Template made a live agent',
  'agent.import': 'Agent imported',
};

/**
 * What the account has used and spent: model tokens, runs and tool calls per UTC day
 * (GET /api/account/usage), its balance now and over time, and the balance ledger
 * (GET /api/account/transactions), every charge and grant with the balance after it, a page at a time.
 */
export function Usage() {
  const summary = useAccountSummary();
  const [range, setRange] = useState('30');
  const usage = useQuery({
    queryKey: useAccountKey('usage', range),
    queryFn: async () => unwrap(await client.GET('/api/account/usage', { params: { query: { from: utcDay(Number(range) - 1), to: utcDay(0) } } })),
    refetchInterval: 30_000,
  });
  const ledger = useCursorList(useAccountKey('transactions'), async (cursor) =>
    pageOf(await client.GET('/api/account/transactions', { params: { query: { cursor, limit: 50 } } })),
  );
  return (
    <>
      <PageHeader
        title="Usage"
        description={`What ${summary.data?.name ?? 'this account'} used and spent: model tokens and runs per day, and the balance and what moved it. Creating a non-template agent spends from the balance.`}
        actions={
          <Badge size="xl" variant="light" color="teal">
            {summary.data ? `${summary.data.balance.toLocaleString()} units` : '…'}
          </Badge>
        }
      />
      <Paper withBorder p="md" radius="md" mb="md">
        <Group justify="space-between" mb="xs">
          <Title order={2} size="h5">
            Model use per day (UTC)
          </Title>
          <SegmentedControl aria-label="Usage range" size="xs" data={RANGES} value={range} onChange={setRange} />
        </Group>
        <QueryState query={usage} loadingLabel="Loading usage">
          {(days) => {
            const total = days.reduce(
              (t, d) => ({ runs: t.runs + d.runs, tokens: t.tokens + d.promptTokens + d.completionTokens, tools: t.tools + d.toolCalls }),
              { runs: 0, tokens: 0, tools: 0 },
            );
            const today = days.at(-1);
            return (
              <>
                <SimpleGrid cols={{ base: 2, md: 4 }} mb="sm">
                  <Stat label="Runs" value={total.runs} />
                  <Stat label="Model tokens" value={total.tokens} />
                  <Stat label="Tool calls" value={total.tools} />
                  <Stat label="Tokens today" value={today ? today.promptTokens + today.completionTokens : 0} />
                </SimpleGrid>
                {total.runs + total.tokens + total.tools === 0 ? (
                  <Text size="sm" c="dimmed">
                    Nothing used in these days: runs of agents with a model show their tokens here, day by day.
                  </Text>
                ) : (
                  <Suspense fallback={<Loading label="Loading the chart" />}>
                    <UsageChart days={days} />
                  </Suspense>
                )}
              </>
            );
          }}
        </QueryState>
      </Paper>
      <QueryState query={{ ...ledger, data: ledger.items }} loadingLabel="Loading the ledger">
        {(entries) =>
          entries.length === 0 ? (
            <EmptyState title="No balance movements yet">Charges and grants appear here as they happen.</EmptyState>
          ) : (
            <>
              <Paper withBorder p="md" radius="md" mb="md">
                <Title order={2} size="h5" mb="xs">
                  Balance over time
                </Title>
                <Suspense fallback={<Loading label="Loading the chart" />}>
                  <BalanceChart entries={entries} />
                </Suspense>
              </Paper>
              <Title order={2} size="h4" mb="xs">
                Ledger
              </Title>
              <Table verticalSpacing="xs" striped aria-label="Ledger">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>When</Table.Th>
                    <Table.Th>What</Table.Th>
                    <Table.Th ta="right">Amount</Table.Th>
                    <Table.Th ta="right">Balance after</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {entries.map((t) => (
                    <Table.Tr key={t.id}>
                      <Table.Td>
                        <DateTime value={t.createdAt} />
                      </Table.Td>
                      <Table.Td>{REASONS[t.reason] ?? t.reason}</Table.Td>
                      <Table.Td ta="right">
                        <Text span size="sm" c={t.amount < 0 ? 'red.9' : 'teal.9'} ff="monospace">
                          {t.amount > 0 ? '+' : ''}
                          {t.amount.toLocaleString()}
                        </Text>
                      </Table.Td>
                      <Table.Td ta="right" ff="monospace">
                        {t.balanceAfter.toLocaleString()}
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
              <LoadMore list={ledger} label="Load older entries" />
            </>
          )
        }
      </QueryState>
    </>
  );
}

function Stat({ label, value }: { label: string; value: number }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text fw={600} size="lg">
        {value.toLocaleString()}
      </Text>
    </div>
  );
}
