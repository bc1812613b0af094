import { Badge, Button, Group } from '@mantine/core';
import type { ReactNode } from 'react';
import { Can } from '../session/permissions';
import { ConfirmButton } from './ConfirmButton';
import { EnabledBadge } from './EnabledBadge';
import { PageHeader } from './PageHeader';

/** A write the header's buttons start (useWrite): pressed with no input, pending while it runs. */
interface Press {
  mutate: (input: undefined) => void;
  isPending: boolean;
  error: unknown;
}

/**
 * The header of a resource's page that can be switched off (a trigger, a webhook): where it sits, its
 * name with its kind and whether it is on, and its actions for the roles that may — the page's own first
 * (`action`: Fire now, Send test), then Enable/Disable, Edit, and Delete behind a confirmation.
 */
export function DetailHeader({
  crumbs,
  name,
  kind,
  enabled,
  offColor,
  description,
  action,
  toggle,
  onEdit,
  remove,
}: {
  crumbs: Array<{ label: string; to: string }>;
  name: string;
  kind: string;
  enabled: boolean;
  offColor?: string;
  description?: ReactNode;
  action?: ReactNode;
  toggle: Press;
  onEdit: () => void;
  /** What the confirmation says is deleted with it, and its button ("Delete trigger"). */
  remove: Press & { message: string; confirmLabel: string };
}) {
  return (
    <PageHeader
      crumbs={crumbs}
      title={
        <Group gap="sm">
          {name}
          <Badge variant="light">{kind}</Badge>
          <EnabledBadge enabled={enabled} offColor={offColor} />
        </Group>
      }
      description={description}
      actions={
        <>
          <Can right="write">
            {action}
            <Button variant="default" onClick={() => toggle.mutate(undefined)} loading={toggle.isPending}>
              {enabled ? 'Disable' : 'Enable'}
            </Button>
            <Button variant="default" onClick={onEdit}>
              Edit
            </Button>
          </Can>
          <Can right="delete">
            <ConfirmButton
              title={`Delete ${name}?`}
              message={remove.message}
              confirmLabel={remove.confirmLabel}
              onConfirm={() => remove.mutate(undefined)}
              pending={remove.isPending}
              error={remove.error}
            >
              Delete
            </ConfirmButton>
          </Can>
        </>
      }
    />
  );
}
