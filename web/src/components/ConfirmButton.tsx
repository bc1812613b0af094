import { Button, Group, Modal, Stack, Text, type ButtonProps } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { ReactNode } from 'react';
import { ApiErrorAlert } from './ApiErrorAlert';

/**
 * A button for an action that cannot be undone (delete, revoke, remove): it opens a dialog that says what
 * will happen and asks again; the action runs only from the dialog's own button, whose error (the API's
 * message) shows there.
 */
export function ConfirmButton({
  children,
  title,
  message,
  confirmLabel,
  dismissLabel = 'Cancel',
  onConfirm,
  pending,
  error,
  ...button
}: ButtonProps & {
  children: ReactNode;
  title: string;
  message: ReactNode;
  confirmLabel: string;
  /** The dialog's button that leaves things as they are ("Cancel" unless given: a run's cancel says "Keep running"). */
  dismissLabel?: string;
  onConfirm: () => unknown;
  pending?: boolean;
  error?: unknown;
  'aria-label'?: string;
}) {
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <>
      <Button color="red" variant="light" {...button} onClick={open}>
        {children}
      </Button>
      <Modal opened={opened} onClose={close} title={title} centered>
        <Stack>
          <Text size="sm">{message}</Text>
          <ApiErrorAlert error={error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={close} data-autofocus>
              {dismissLabel}
            </Button>
            <Button color="red" loading={pending} onClick={() => void onConfirm()}>
              {confirmLabel}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
