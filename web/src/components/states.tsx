import { Button, Center, Group, Loader, Paper, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { ApiErrorAlert } from './ApiErrorAlert';

/** Loading: a spinner with a name a screen reader says. */
export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <Center py="xl">
      <Loader aria-label={label} role="status" />
    </Center>
  );
}

/** Nothing here yet: says so, and what to do next (the action, when the role may take it). */
export function EmptyState({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <Paper withBorder p="xl" radius="md">
      <Stack align="center" gap="xs">
        <Title order={3} size="h4">
          {title}
        </Title>
        {children && (
          <Text c="dimmed" ta="center" maw={520}>
            {children}
          </Text>
        )}
        {action && <Group mt="sm">{action}</Group>}
      </Stack>
    </Paper>
  );
}

/** A query's three states in one place: loading, the API's error (with Retry), or the content. */
export function QueryState<T>({
  query,
  children,
  loadingLabel,
}: {
  query: { isPending: boolean; error: unknown; data: T | undefined; refetch: () => unknown };
  children: (data: T) => ReactNode;
  loadingLabel?: string;
}) {
  if (query.error) {
    return (
      <Stack>
        <ApiErrorAlert error={query.error} />
        <Group>
          <Button variant="default" onClick={() => void query.refetch()}>
            Try again
          </Button>
        </Group>
      </Stack>
    );
  }
  if (query.isPending || query.data === undefined) return <Loading label={loadingLabel} />;
  return <>{children(query.data)}</>;
}
