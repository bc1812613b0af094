import { Badge, Paper, Table, Text, Title } from '@mantine/core';
import { lazy, Suspense } from 'react';
import { client } from '../../api/client';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { PageHeader } from '../../components/PageHeader';
import { EmptyState, Loading, QueryState } from '../../components/states';
import { useAccountKey, useAccountSummary } from '../../session/account';

const BalanceChart = lazy(() => import('./BalanceChart'));

const REASONS: Record<string, string> = {
  initial_grant: 'Starting balance',
  'agent.create': 'Agent created',
  'agent.from_template': 'Template made a live agent',
  'agent.import': 'Agent imported',
};

/**
 * What the account has spent: its balance now and over time, and the balance ledger
 * (GET /api/account/transactions), every charge and grant with the balance after it, a page at a time.
 */
export function Usage() {
  const summary = useAccountSummary();
  const ledger = useCursorList(useAccountKey('transactions'), async (cursor) =>
    pageOf(await client.GET('/api/account/transactions', { params: { query: { cursor, limit: 50 } } })),
  );
  return (
    <>
      <PageHeader
        title="Usage"
        description={`The balance of ${summary.data?.name ?? 'this account'} and what moved it. Creating a non-template agent spends from it.`}
        actions={
          <Badge size="xl" variant="light" color="teal">
            {summary.data ? `${summary.data.balance.toLocaleString()} units` : '…'}
          </Badge>
        }
      />
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
