import { Button, Group, Modal, NativeSelect, Stack, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { client } from '../../api/client';
import { ApiError, fieldOfMessage, unwrap } from '../../api/errors';
import { useComponentSchema, validateAgainst, type FieldError } from '../../api/openapi-schema';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { ShownOnce } from '../../components/ShownOnce';
import { useIntentKey, useWrite } from '../../lib/mutations';
import { useAccountKey } from '../../session/account';
import { PermissionChoices, type Choices } from './PermissionChoices';
import { ROLES, type PermissionKey, type Role } from './team-labels';

/** Custom booleans from the three-way choice per permission: only the ones that differ from the role are sent. */
function overridesOf(choice: Choices): Partial<Record<PermissionKey, boolean>> {
  return Object.fromEntries(Object.entries(choice).filter(([, v]) => v !== 'role').map(([k, v]) => [k, v === 'allow'])) as Partial<Record<PermissionKey, boolean>>;
}

/**
 * Invite someone by email with a role (and permissions other than the role's, if wanted). The invitation's
 * token is shown once, with a copy button: the invitee signs in with that email and accepts with it on
 * their Team page. The API refuses (403, shown) a grant beyond what the inviter holds.
 */
export function InviteDialog({ onClose }: { onClose: () => void }) {
  const { schema } = useComponentSchema('InviteTeamMember');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [choice, setChoice] = useState<Choices>({ canExport: 'role', canDelete: 'role', canManageTeam: 'role' });
  const [checked, setChecked] = useState<FieldError[]>([]);
  const idempotencyKey = useIntentKey();
  const invite = useWrite(
    async (body: { email: string; role: Role; permissions?: Partial<Record<PermissionKey, boolean>> }) =>
      unwrap(await client.POST('/api/team', { body, headers: { 'idempotency-key': idempotencyKey } })),
    { invalidates: [useAccountKey('team')], success: (m) => `Invited ${m.email}` },
  );
  const apiField = invite.error instanceof ApiError && invite.error.status === 400 ? fieldOfMessage(invite.error.message) : null;
  const errorOf = (field: string) => checked.find((e) => e.path === field)?.message ?? (apiField === field ? (invite.error as ApiError).message.replace(/^body\.[^:]+: /, '') : undefined);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const permissions = overridesOf(choice);
    const body = { email: email.trim(), role, ...(Object.keys(permissions).length ? { permissions } : {}) };
    const problems = schema ? validateAgainst(schema, body) : [];
    setChecked(problems);
    if (!problems.length) invite.mutate(body);
  };

  if (invite.data) {
    return (
      <Modal opened onClose={onClose} title={`Invited ${invite.data.email}`} size="lg" centered>
        <Stack>
          <ShownOnce label="Invitation token" value={invite.data.inviteToken} />
          <Text size="sm">
            Send it to {invite.data.email}. They sign in (or create an account) with that address, open Team, and accept with the token. It expires{' '}
            {invite.data.expiresAt ? new Date(invite.data.expiresAt).toLocaleString() : 'in a week'}.
          </Text>
          <Group justify="flex-end">
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      </Modal>
    );
  }

  return (
    <Modal opened onClose={onClose} title="Invite a member" size="lg" centered>
      <form onSubmit={submit} noValidate>
        <Stack>
          <TextInput label="Email" type="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} error={errorOf('email')} data-autofocus />
          <NativeSelect
            label="Role"
            description={ROLES.find((r) => r.role === role)?.what}
            data={ROLES.map((r) => ({ value: r.role, label: r.role }))}
            value={role}
            onChange={(e) => setRole(e.currentTarget.value as Role)}
            error={errorOf('role')}
          />
          <PermissionChoices value={choice} onChange={setChoice} />
          <ApiErrorAlert error={invite.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={invite.isPending} disabled={!email.trim()}>
              Invite
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
