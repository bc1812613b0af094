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
            {copied ? <CheckIcon /> : <CopyIcon />}
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

/** Drawn, not a glyph: the copy sign is missing from common system fonts. */
function CopyIcon() {
  return (
    <svg aria-hidden="true" width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round">
      <rect x="8" y="8" width="12" height="12" rx="2" />
      <path d="M16 8V6a2 2 0 0 0-2-2H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h2" />
    </svg>
  );
}

function CheckIcon() {
  return (
    <svg aria-hidden="true" width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round">
      <path d="M5 12l5 5L20 7" />
    </svg>
  );
}
