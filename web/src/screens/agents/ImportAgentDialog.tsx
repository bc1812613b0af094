import { Modal, Text } from '@mantine/core';

/** Import an exported agent (filled in with the agent screens). */
export function ImportAgentDialog({ onClose }: { onClose: () => void }) {
  return (
    <Modal opened onClose={onClose} title="Import an agent" centered>
      <Text>Coming with the agent screens.</Text>
    </Modal>
  );
}
