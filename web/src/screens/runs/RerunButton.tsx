import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useNavigate } from 'react-router';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { useWrite } from '../../lib/mutations';
import { useAccountId, useAccountKey } from '../../session/account';
import { rerunFrom } from './rerun';

/**
 * `Rerun from here` on a step of an ended run: after a dialog that says what happens (the steps before are
 * copied, not made again; this one and those after are made anew, with the agent as it is now, and charged as
 * any run), a new run starts and its page opens.
 */
export function RerunButton({ runId, stepIndex }: { runId: string; stepIndex: number }) {
  const accountId = useAccountId();
  const navigate = useNavigate();
  const [opened, { open, close }] = useDisclosure(false);
  const rerun = useWrite(async () => rerunFrom(runId, stepIndex), {
    invalidates: [useAccountKey('runs')],
    onSuccess: (run) => {
      close();
      navigate(`/w/${accountId}/runs/${run.id}`);
    },
  });
  return (
    <>
      <Button size="xs" variant="default" onClick={open}>
        Rerun from here
      </Button>
      <Modal opened={opened} onClose={close} title={`Rerun from step ${stepIndex + 1}?`} centered>
        <Stack>
          <Text size="sm">
            {stepIndex === 0
              ? 'A new run starts with the same input and makes every step anew, with the agent as it is now.'
              : `A new run starts: steps 1 to ${stepIndex} are copied into it as they were (no model or tool call is made for them), and it goes on from step ${stepIndex + 1} with the agent as it is now.`}{' '}
            It is charged and limited as any run.
          </Text>
          <ApiErrorAlert error={rerun.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={close} data-autofocus>
              Cancel
            </Button>
            <Button loading={rerun.isPending} onClick={() => rerun.mutate(undefined)}>
              Rerun
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
