/** The most of a receiver's response body kept with a delivery attempt (migration 21 checks it too). */
export const RESPONSE_SNIPPET_BYTES = 1024;

/** Media types that are never text, whatever their bytes look like. */
const BINARY_TYPES = /^(image|audio|video|font)\/|^application\/(octet-stream|pdf|zip|gzip|x-gzip|x-tar|x-protobuf|protobuf|msgpack|x-msgpack|cbor|wasm)\b/;

/** Whether `text` holds what a text body does not: controls other than tab and line breaks, or U+FFFD (bytes that were not UTF-8). */
function looksBinary(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0b && c !== 0x0c && c !== 0x0d) || c === 0x7f || c === 0xfffd) return true;
  }
  return false;
}

/**
 * What a delivery attempt keeps of the receiver's answer: the first RESPONSE_SNIPPET_BYTES bytes at most of
 * its body (`body`: as read, decoded as UTF-8), cut before a character that would not fit. Null for an empty
 * body and for one that is not text: a binary media type, a compressed body (`content-encoding`), or bytes
 * that are not UTF-8 text.
 */
export function responseSnippet(body: string, headers: { 'content-type'?: string; 'content-encoding'?: string }): string | null {
  const type = (headers['content-type'] ?? '').trim().toLowerCase();
  const encoding = (headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (BINARY_TYPES.test(type) || (encoding !== '' && encoding !== 'identity')) return null;
  const bytes = Buffer.from(body, 'utf8');
  let end = Math.min(bytes.length, RESPONSE_SNIPPET_BYTES);
  // Not in the middle of a character: back up to the first byte of the one that would not fit.
  if (end < bytes.length) while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  const snippet = bytes.subarray(0, end).toString('utf8');
  if (snippet === '' || looksBinary(snippet)) return null;
  return snippet;
}
