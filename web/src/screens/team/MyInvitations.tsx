import { Button, Group, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { client, type Schemas } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { DateTime } from '../../components/DateTime';
import { useWrite } from '../../lib/mutations';

/**
 * Invitations addressed to the signed-in user (GET /api/invitations), each with a form for the token the
 * inviter passed on; accepting joins that account and opens it. Nothing shows when there are none.
 */
export function MyInvitations() {
  const invitations = useQuery({ queryKey: ['invitations'], queryFn: async () => unwrap(await client.GET('/api/invitations')), refetchInterval: 15_000 });
  if (!invitations.data?.length && !invitations.error) return null;
  return (
    <Paper withBorder p="md" radius="md" mb="lg">
      <Title order={2} size="h4" mb="xs">
        Invitations to you
      </Title>
      <ApiErrorAlert error={invitations.error} />
      <Stack gap="sm">
        {invitations.data?.map((invitation) => <Invitation key={invitation.id} invitation={invitation} />)}
      </Stack>
    </Paper>
  );
}

function Invitation({ invitation }: { invitation: Schemas['Invitation'] }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [token, setToken] = useState('');
  const accept = useWrite(
    async () => unwrap(await client.POST('/api/invitations/{id}/accept', { params: { path: { id: invitation.id } }, body: { token: token.trim() } })),
    {
      invalidates: [['invitations'], ['accounts']],
      success: `You joined ${invitation.accountName} as ${invitation.role}`,
      onSuccess: async (member) => {
        await queryClient.refetchQueries({ queryKey: ['accounts'] });
        navigate(`/w/${member.accountId}/agents`);
      },
    },
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    accept.mutate(undefined);
  };
  return (
    <form onSubmit={submit} aria-label={`Invitation to ${invitation.accountName}`}>
      <Stack gap={6}>
        <Text size="sm">
          <b>{invitation.accountName}</b> invites you ({invitation.email}) as <b>{invitation.role}</b>; it expires <DateTime value={invitation.expiresAt} relative />.
        </Text>
        <Group align="flex-end">
          <PasswordInput
            label="Invitation token"
            description="The token the inviter passed on to you"
            required
            value={token}
            onChange={(e) => setToken(e.currentTarget.value)}
            w={420}
          />
          <Button type="submit" loading={accept.isPending} disabled={!token.trim()}>
            Accept invitation
          </Button>
        </Group>
        <ApiErrorAlert error={accept.error} />
      </Stack>
    </form>
  );
}
