import { isDeepStrictEqual } from 'node:util';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * A `tools/call` result as the run records it (docs/api.md § MCP tools): its text content, in order, and its
 * `structuredContent` as JSON when present (left out when a text part already says exactly that, as
 * servers that follow the spec's advice do); other content named in brackets (`[image image/png, 1234
 * bytes of base64]`), never copied (an image is no use to the model as base64 and would crowd out the
 * rest). Kept to MAX_RESULT_CHARACTERS, with the count of what was left out.
 */

/** What a result's text may hold; a step's output is at most 256 KiB of JSON in all. */
export const MAX_RESULT_CHARACTERS = 200_000;

type Content = CallToolResult['content'][number];

function partText(part: Content): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'image':
    case 'audio':
      return `[${part.type} ${part.mimeType}, ${part.data.length} bytes of base64]`;
    case 'resource_link':
      return `[resource ${part.uri}${part.name ? ` (${part.name})` : ''}]`;
    case 'resource': {
      const resource = part.resource as { uri: string; text?: string; mimeType?: string };
      return typeof resource.text === 'string' ? resource.text : `[resource ${resource.uri}${resource.mimeType ? `, ${resource.mimeType}` : ''}]`;
    }
    default:
      return `[${(part as { type?: string }).type ?? 'unknown'} content]`;
  }
}

const parses = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** The result's text (see above) and whether the server called it an error. */
export function resultText(result: CallToolResult): { text: string; isError: boolean } {
  const content = Array.isArray(result.content) ? result.content : [];
  const parts = content.map(partText);
  const structured = result.structuredContent;
  if (structured !== undefined && structured !== null && !content.some((p) => p.type === 'text' && isDeepStrictEqual(parses(p.text), structured))) {
    parts.push(JSON.stringify(structured));
  }
  let text = parts.join('\n');
  if (text.length > MAX_RESULT_CHARACTERS) text = `${text.slice(0, MAX_RESULT_CHARACTERS)}… [${text.length - MAX_RESULT_CHARACTERS} more characters left out]`;
  return { text, isError: result.isError === true };
}
