import { TypographyStylesProvider } from '@mantine/core';
import Markdown from 'react-markdown';

/** Markdown rendered as HTML; raw HTML in the source is shown as text, never run (react-markdown's default). */
export default function MarkdownPreview({ source }: { source: string }) {
  return (
    <TypographyStylesProvider>
      <Markdown>{source}</Markdown>
    </TypographyStylesProvider>
  );
}
