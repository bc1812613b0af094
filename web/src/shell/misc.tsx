import { Anchor, Button, Container, Stack, Text, Title } from '@mantine/core';
import { Link, Navigate } from 'react-router';
import { ApiErrorAlert } from '../components/ApiErrorAlert';
import { Loading } from '../components/states';
import { useAccounts } from '../session/account';

/** / → the caller's own workspace. */
export function HomeRedirect() {
  const accounts = useAccounts();
  if (accounts.error) return <Container py="xl"><ApiErrorAlert error={accounts.error} /></Container>;
  const own = accounts.data?.[0];
  if (!own) return <Loading label="Loading your accounts" />;
  return <Navigate to={`/w/${own.id}/agents`} replace />;
}

export function NotFound() {
  return (
    <Container py="xl">
      <Stack align="flex-start">
        <Title order={1}>Nothing here</Title>
        <Text c="dimmed">This address names no page of the console. It may have been mistyped, or the thing it showed was deleted.</Text>
        <Button component={Link} to="/">
          Go to your agents
        </Button>
        <Anchor href="/api/docs">API documentation</Anchor>
      </Stack>
    </Container>
  );
}
