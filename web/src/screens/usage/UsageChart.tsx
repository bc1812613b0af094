import '@mantine/charts/styles.css';
import { BarChart } from '@mantine/charts';
import { SimpleGrid } from '@mantine/core';
import type { Schemas } from '../../api/client';

/** Model tokens and runs per UTC day (GET /api/account/usage), as bars (lazy: the chart library loads with it). */
export default function UsageChart({ days }: { days: Array<Schemas['UsageDay']> }) {
  const data = days.map((d) => ({
    day: d.date.slice(5),
    'Prompt tokens': d.promptTokens,
    'Completion tokens': d.completionTokens,
    Runs: d.runs,
    'Tool calls': d.toolCalls,
  }));
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }}>
      <div role="img" aria-label={`Model tokens per day over the last ${days.length} days`}>
        <BarChart
          h={220}
          data={data}
          dataKey="day"
          type="stacked"
          withLegend
          series={[
            { name: 'Prompt tokens', color: 'blue.8' },
            { name: 'Completion tokens', color: 'grape.8' },
          ]}
        />
      </div>
      <div role="img" aria-label={`Runs and tool calls per day over the last ${days.length} days`}>
        <BarChart
          h={220}
          data={data}
          dataKey="day"
          withLegend
          series={[
            { name: 'Runs', color: 'teal.8' },
            { name: 'Tool calls', color: 'orange.8' },
          ]}
        />
      </div>
    </SimpleGrid>
  );
}
