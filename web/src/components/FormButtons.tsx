import { Button, Group } from '@mantine/core';

/** A form dialog's buttons, at its foot: Cancel, which closes it, then its submit ("Save" or "Create"), busy while the request runs. */
export function FormButtons({ onCancel, submit, pending, disabled }: { onCancel: () => void; submit: string; pending: boolean; disabled?: boolean }) {
  return (
    <Group justify="flex-end">
      <Button variant="default" onClick={onCancel}>
        Cancel
      </Button>
      <Button type="submit" loading={pending} disabled={disabled}>
        {submit}
      </Button>
    </Group>
  );
}
