import { Anchor, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { DateTime } from '../../components/DateTime';
import { useAccountId } from '../../session/account';
import type { RunWithReruns } from './rerun';

const short = (id: string) => id.slice(0, 8);

/**
 * The runs a rerun links, both ways: "Rerun of <run> from step N" on the new run; on the run rerun, its
 * `Reruns` (newest first, the API's last 20), each a link with the step it started from.
 */
export function RerunLinks({ run }: { run: RunWithReruns }) {
  const accountId = useAccountId();
  const reruns = run.reruns ?? [];
  return (
    <>
      {run.rerunOf && (
        <Text>
          Rerun of{' '}
          <Anchor component={Link} to={`/w/${accountId}/runs/${run.rerunOf.runId}`}>
            run {short(run.rerunOf.runId)}
          </Anchor>{' '}
          from step {run.rerunOf.fromStep + 1}
          {run.rerunOf.fromStep > 0 && ` (steps 1 to ${run.rerunOf.fromStep} copied from it)`}
        </Text>
      )}
      {reruns.length > 0 && (
        <Paper withBorder p="md">
          <Stack gap="xs">
            <Title order={2} size="h4" id="reruns-title">
              Reruns
            </Title>
            <Stack component="ul" aria-labelledby="reruns-title" gap={4} m={0} pl="md">
              {reruns.map((r) => (
                <li key={r.runId}>
                  <Group gap="xs">
                    <Anchor component={Link} to={`/w/${accountId}/runs/${r.runId}`}>
                      Run {short(r.runId)}
                    </Anchor>
                    <Text size="sm">
                      from step {r.fromStep + 1}, <DateTime value={r.createdAt} />
                    </Text>
                  </Group>
                </li>
              ))}
            </Stack>
          </Stack>
        </Paper>
      )}
    </>
  );
}
