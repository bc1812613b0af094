/** The most of a receiver's response body kept with a delivery attempt (migration 21 checks it too). */
export const RESPONSE_SNIPPET_BYTES = 1024;

/** Media types that are never text, whatever their bytes look like. */
const BINARY_TYPES = /^(image|audio|video|font)\/|^application\/(octet-stream|pdf|zip|gzip|x-gzip|x-tar|x-protobuf|protobuf|msgpack|x-msgpack|cbor|wasm)\b/;

/** Whether `text` holds what a text body does not: controls other than tab, line breaks and form feed. */
function hasControls(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0b && c !== 0x0c && c !== 0x0d) || c === 0x7f) return true;
  }
  return false;
}

/** Decodes UTF-8 strictly: throws on bytes that are not UTF-8 (a text body may hold U+FFFD itself; a binary one is not read as text). */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * What a delivery attempt keeps of the receiver's answer: the first RESPONSE_SNIPPET_BYTES bytes at most of
 * its body (`body`: the bytes as received), cut before a character that would not fit. Null for an empty
 * body and for one that is not text: a binary media type, a compressed body (`content-encoding`), or bytes
 * that are not UTF-8 text (judged from the bytes, not from a decoding that would have replaced them).
 */
export function responseSnippet(body: Uint8Array, headers: { 'content-type'?: string; 'content-encoding'?: string }): string | null {
  const type = (headers['content-type'] ?? '').trim().toLowerCase();
  const encoding = (headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (BINARY_TYPES.test(type) || (encoding !== '' && encoding !== 'identity')) return null;
  let end = Math.min(body.length, RESPONSE_SNIPPET_BYTES);
  // Not in the middle of a character: back up to the first byte of the one that would not fit.
  if (end < body.length) while (end > 0 && (body[end]! & 0xc0) === 0x80) end--;
  let snippet: string;
  try {
    snippet = strictUtf8.decode(body.subarray(0, end));
  } catch {
    return null;
  }
  if (snippet === '' || hasControls(snippet)) return null;
  return snippet;
}
