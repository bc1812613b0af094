import { Button, Group, Modal, NativeSelect, Stack } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { client } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { useWrite } from '../../lib/mutations';
import { useAccountKey } from '../../session/account';
import { PermissionChoices, type Choices } from './PermissionChoices';
import { PERMISSIONS, ROLES, type Member, type Role } from './team-labels';

/** Change a member's role and the permissions that differ from it (null puts one back to the role's). */
export function EditMemberDialog({ member, onClose }: { member: Member; onClose: () => void }) {
  const [role, setRole] = useState<Role>(member.role);
  const [choice, setChoice] = useState<Choices>(
    () =>
      Object.fromEntries(
        PERMISSIONS.map(({ key }) => [key, member.customPermissions[key] === undefined ? 'role' : member.customPermissions[key] ? 'allow' : 'deny']),
      ) as Choices,
  );
  const save = useWrite(
    async () =>
      unwrap(
        await client.PATCH('/api/team/{id}', {
          params: { path: { id: member.id } },
          body: { role, permissions: Object.fromEntries(Object.entries(choice).map(([k, v]) => [k, v === 'role' ? null : v === 'allow'])) },
        }),
      ),
    { invalidates: [useAccountKey('team')], success: (m) => `Saved ${m.email}`, onSuccess: onClose },
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate(undefined);
  };
  return (
    <Modal opened onClose={onClose} title={`Role and permissions of ${member.email}`} size="lg" centered>
      <form onSubmit={submit}>
        <Stack>
          <NativeSelect
            label="Role"
            description={ROLES.find((r) => r.role === role)?.what}
            data={ROLES.map((r) => ({ value: r.role, label: r.role }))}
            value={role}
            onChange={(e) => setRole(e.currentTarget.value as Role)}
          />
          <PermissionChoices value={choice} onChange={setChoice} />
          <ApiErrorAlert error={save.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={save.isPending}>
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
