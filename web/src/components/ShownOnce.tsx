import { ActionIcon, Alert, Code, CopyButton, Group, Tooltip } from '@mantine/core';

/**
 * A secret the API shows once (an API key, an invitation token, a webhook's signing secret, a hook's token):
 * shown in full with a copy button and the warning that it will not be shown again. Later reads of the
 * resource show the API's mask (`••••abcd`), which <Masked> renders.
 */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  return (
    <Alert color="yellow" variant="light" title={`${label}: copy it now`}>
      <Group gap="xs" wrap="nowrap" align="center">
        <Code style={{ wordBreak: 'break-all' }} aria-label={label}>
          {value}
        </Code>
        <CopyValue value={value} label={`Copy ${label.toLowerCase()}`} />
      </Group>
      It is shown this once: the API keeps only what it needs to check it.
    </Alert>
  );
}

/** A copy-to-clipboard button whose name says what it copies; it says "Copied" once done. */
export function CopyValue({ value, label = 'Copy' }: { value: string; label?: string }) {
  return (
    <CopyButton value={value} timeout={2000}>
      {({ copied, copy }) => (
        <Tooltip label={copied ? 'Copied' : label} withArrow>
          <ActionIcon variant="subtle" color={copied ? 'teal' : 'gray'} onClick={copy} aria-label={copied ? 'Copied' : label}>
            <span aria-hidden="true">{copied ? '✓' : '⧉'}</span>
          </ActionIcon>
        </Tooltip>
      )}
    </CopyButton>
  );
}

/** A stored secret as the API returns it after the request that set it: masked, never in full. */
export function Masked({ value }: { value: string | null | undefined }) {
  return <Code aria-label="Secret (masked)">{value || '—'}</Code>;
}
