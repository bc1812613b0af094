import { Anchor, Button, Center, Group, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { ApiErrorAlert } from '../components/ApiErrorAlert';
import { createAccount, signIn, useSession } from '../session/session';

/**
 * Sign in, or create an account with the same two fields (POST /api/auth/login | register, in the
 * console's cookie mode). Afterwards, back to where the person was going.
 */
export function SignIn() {
  const session = useSession();
  const location = useLocation();
  const navigate = useNavigate();
  const state = (location.state ?? {}) as { from?: string; message?: string };
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState<'signIn' | 'create' | null>(null);
  const [error, setError] = useState<unknown>(state.message ? new Error(state.message) : null);

  if (session.status === 'signedIn' && !busy) return <Navigate to={state.from ?? '/'} replace />;

  const run = async (kind: 'signIn' | 'create') => {
    setBusy(kind);
    setError(null);
    try {
      await (kind === 'signIn' ? signIn(email, password) : createAccount(email, password));
      navigate(state.from ?? '/', { replace: true });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run('signIn');
  };

  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" w={420} component="main">
        <form onSubmit={submit} noValidate>
          <Stack>
            <div>
              <Title order={1} size="h2">
                Agent Platform
              </Title>
              <Text c="dimmed" size="sm">
                Sign in to build and run your agents, or create an account: it starts with a balance to spend on agents.
              </Text>
            </div>
            <ApiErrorAlert error={error} />
            <TextInput label="Email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} data-autofocus autoFocus />
            <PasswordInput
              label="Password"
              autoComplete={busy === 'create' ? 'new-password' : 'current-password'}
              required
              description="At least 8 characters"
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
            />
            <Group grow>
              <Button type="submit" loading={busy === 'signIn'} disabled={busy !== null}>
                Sign in
              </Button>
              <Button variant="light" loading={busy === 'create'} disabled={busy !== null} onClick={() => void run('create')}>
                Create account
              </Button>
            </Group>
            <Text size="xs" c="dimmed">
              Scripts use the same API: <Anchor href="/api/docs">API documentation</Anchor>.
            </Text>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
