import '@mantine/charts/styles.css';
import { AreaChart } from '@mantine/charts';
import type { Schemas } from '../../api/client';

/** The balance after each movement of the ledger's loaded pages, oldest first (lazy: the chart library loads with it). */
export default function BalanceChart({ entries }: { entries: Array<Schemas['Transaction']> }) {
  const data = [...entries].reverse().map((t) => ({ at: new Date(t.createdAt).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' }), Balance: t.balanceAfter }));
  return (
    <div role="img" aria-label={`Balance after each of the last ${entries.length} movements`}>
      <AreaChart h={180} data={data} dataKey="at" series={[{ name: 'Balance', color: 'teal.8' }]} curveType="step" withDots={data.length < 40} />
    </div>
  );
}
