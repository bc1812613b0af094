import { Badge, Button, Group, Table, Text, Tooltip, VisuallyHidden } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ConfirmButton } from '../../components/ConfirmButton';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { PageHeader } from '../../components/PageHeader';
import { EmptyState, QueryState } from '../../components/states';
import { useWrite } from '../../lib/mutations';
import { useAccountKey, useAccounts, useActingAccount } from '../../session/account';
import { Can, useCan } from '../../session/permissions';
import { EditMemberDialog } from './EditMemberDialog';
import { InviteDialog } from './InviteDialog';
import { MyInvitations } from './MyInvitations';
import { PERMISSIONS, ROLES, type Member } from './team-labels';

/**
 * The account's team (GET /api/team): members and open invitations with their role and effective
 * permissions; invite, change and remove for those who may manage the team; leave for a member. Above it,
 * any invitations addressed to you.
 */
export function Team() {
  const acting = useActingAccount();
  const me = useQuery({ queryKey: ['me'], queryFn: async () => unwrap(await client.GET('/api/auth/me')), staleTime: Infinity });
  const list = useCursorList(useAccountKey('team'), async (cursor) => pageOf(await client.GET('/api/team', { params: { query: { cursor, limit: 50 } } })));
  const [inviting, setInviting] = useState(false);
  const [editing, setEditing] = useState<Member | null>(null);
  const canManage = useCan('manageTeam');
  return (
    <>
      <MyInvitations />
      <PageHeader
        title="Team"
        description={`Who works in ${acting?.name ?? 'this account'}, in what role. You act here as ${acting?.role ?? '…'}.`}
        actions={
          <Can right="manageTeam">
            <Button onClick={() => setInviting(true)}>Invite member</Button>
          </Can>
        }
      />
      <QueryState query={{ ...list, data: list.items }} loadingLabel="Loading the team">
        {(members) =>
          members.length === 0 ? (
            <EmptyState
              title="Only the owner so far"
              action={
                canManage ? (
                  <Button variant="light" onClick={() => setInviting(true)}>
                    Invite someone
                  </Button>
                ) : undefined
              }
            >
              Invite people by email as admins, editors or viewers. They accept with the token you pass on, then act in this account with the role you gave them.
            </EmptyState>
          ) : (
            <>
              <Table.ScrollContainer minWidth={760}>
                <Table verticalSpacing="sm" aria-label="Members">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Email</Table.Th>
                      <Table.Th>Role</Table.Th>
                      <Table.Th>Permissions</Table.Th>
                      <Table.Th>Status</Table.Th>
                      <Table.Th>
                        <VisuallyHidden>Actions</VisuallyHidden>
                      </Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {members.map((m) => (
                      <MemberRow key={m.id} member={m} mine={m.userId !== null && m.userId === me.data?.id} onEdit={() => setEditing(m)} />
                    ))}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
              <LoadMore list={list} label="Load more members" />
            </>
          )
        }
      </QueryState>
      <Text size="sm" fw={500} mt="lg">
        Roles
      </Text>
      <Table aria-label="Roles" fz="sm" mt={4} maw={760}>
        <Table.Tbody>
          <Table.Tr>
            <Table.Td fw={500}>owner</Table.Td>
            <Table.Td>The account&apos;s creator: everything, always</Table.Td>
          </Table.Tr>
          {ROLES.map((r) => (
            <Table.Tr key={r.role}>
              <Table.Td fw={500}>{r.role}</Table.Td>
              <Table.Td>{r.what}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {inviting && <InviteDialog onClose={() => setInviting(false)} />}
      {editing && <EditMemberDialog member={editing} onClose={() => setEditing(null)} />}
    </>
  );
}

function MemberRow({ member, mine, onEdit }: { member: Member; mine: boolean; onEdit: () => void }) {
  const navigate = useNavigate();
  const accounts = useAccounts();
  const invalidates = [useAccountKey('team')];
  const remove = useWrite(async () => unwrap(await client.DELETE('/api/team/{id}', { params: { path: { id: member.id } } })), {
    invalidates: [...invalidates, ['accounts']],
    success: mine ? 'You left the account' : `Removed ${member.email}`,
    onSuccess: () => {
      if (mine) navigate(`/w/${accounts.data?.[0]?.id ?? ''}/agents`);
    },
  });
  return (
    <Table.Tr>
      <Table.Td>
        {member.email}
        {mine && (
          <Text span size="xs" c="dimmed">
            {' '}
            (you)
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        <Text size="sm" fw={500}>
          {member.role}
        </Text>
      </Table.Td>
      <Table.Td>
        <Group gap={4}>
          {PERMISSIONS.map((p) => (
            <Tooltip key={p.key} label={`${member.permissions[p.key] ? 'May' : 'May not'} ${p.what}${member.customPermissions[p.key] !== undefined ? ' (set for this member)' : ' (the role\'s default)'}`}>
              <Badge size="sm" tt="none" variant={member.permissions[p.key] ? 'light' : 'outline'} color={member.permissions[p.key] ? 'teal' : 'gray'} tabIndex={0}>
                {member.permissions[p.key] ? '' : 'no '}
                {p.label.toLowerCase()}
                {member.customPermissions[p.key] !== undefined ? '*' : ''}
              </Badge>
            </Tooltip>
          ))}
        </Group>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{member.status}</Text>
        <Text size="xs" c="dimmed">
          {member.status === 'invited' ? (
            <>
              invited <DateTime value={member.invitedAt} relative />, expires <DateTime value={member.expiresAt} relative />
            </>
          ) : (
            <>
              since <DateTime value={member.acceptedAt ?? member.invitedAt} relative />
            </>
          )}
        </Text>
      </Table.Td>
      <Table.Td>
        <Group gap="xs" justify="flex-end" display={member.status === 'removed' ? 'none' : undefined}>
          {!mine && (
            <Can right="manageTeam">
              <Button size="compact-sm" variant="default" onClick={onEdit} aria-label={`Change ${member.email}`}>
                Change
              </Button>
            </Can>
          )}
          {mine ? (
            <ConfirmButton
              size="compact-sm"
              title="Leave this account?"
              message="You lose access at once; to come back, someone must invite you again."
              confirmLabel="Leave"
              onConfirm={() => remove.mutate(undefined)}
              pending={remove.isPending}
              error={remove.error}
            >
              Leave
            </ConfirmButton>
          ) : (
            <Can right="manageTeam">
              <ConfirmButton
                size="compact-sm"
                aria-label={`Remove ${member.email}`}
                title={`Remove ${member.email}?`}
                message={member.status === 'invited' ? 'The invitation is withdrawn: its token no longer works.' : 'They lose access to this account on their next request.'}
                confirmLabel="Remove"
                onConfirm={() => remove.mutate(undefined)}
                pending={remove.isPending}
                error={remove.error}
              >
                Remove
              </ConfirmButton>
            </Can>
          )}
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}
