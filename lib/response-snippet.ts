/** The most of a receiver's response body kept with a delivery attempt (migration 21 checks it too). */
export const RESPONSE_SNIPPET_BYTES = 1024;

/** Media types that are never text, whatever their bytes look like. */
const BINARY_TYPES = /^(image|audio|video|font)\/|^application\/(octet-stream|pdf|zip|gzip|x-gzip|x-tar|x-protobuf|protobuf|msgpack|x-msgpack|cbor|wasm)\b/;

/** Characters a text body does not hold: controls other than tab and line breaks, and U+FFFD (bytes that were not UTF-8). */
const NOT_TEXT = /[\u0000-\u0008\u000e-\u001f\u007f\ufffd]/;

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
  if (snippet === '' || NOT_TEXT.test(snippet)) return null;
  return snippet;
}
