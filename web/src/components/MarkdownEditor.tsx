import { Paper, Tabs, Text, Textarea } from '@mantine/core';
import { lazy, Suspense, useState } from 'react';
import { Loading } from './states';

// The renderer loads only when someone opens Preview.
const MarkdownPreview = lazy(() => import('./MarkdownPreview'));

/** Markdown, written in a text area and previewed as it will read (a Write / Preview pair of tabs). */
export function MarkdownEditor({
  label,
  description,
  value,
  onChange,
  error,
  maxLength,
}: {
  label: string;
  description?: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
  maxLength?: number;
}) {
  const [tab, setTab] = useState<string | null>('write');
  return (
    <div>
      <Text size="sm" fw={500} id="markdown-editor-label">
        {label}
      </Text>
      {description && (
        <Text size="xs" c="dimmed" mb={4}>
          {description}
        </Text>
      )}
      <Tabs value={tab} onChange={setTab} variant="outline">
        <Tabs.List aria-label={`${label}: write or preview`}>
          <Tabs.Tab value="write">Write</Tabs.Tab>
          <Tabs.Tab value="preview">Preview</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="write" pt="xs">
          <Textarea
            aria-label={label}
            autosize
            minRows={8}
            maxRows={30}
            value={value}
            maxLength={maxLength}
            error={error}
            onChange={(e) => onChange(e.currentTarget.value)}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          />
          {maxLength && (
            <Text size="xs" c="dimmed" ta="right">
              {value.length.toLocaleString()} / {maxLength.toLocaleString()} characters
            </Text>
          )}
        </Tabs.Panel>
        <Tabs.Panel value="preview" pt="xs">
          <Paper withBorder p="md" mih={120}>
            {value.trim() ? (
              <Suspense fallback={<Loading label="Loading the preview" />}>
                <MarkdownPreview source={value} />
              </Suspense>
            ) : (
              <Text c="dimmed">Nothing to preview yet.</Text>
            )}
          </Paper>
        </Tabs.Panel>
      </Tabs>
    </div>
  );
}
