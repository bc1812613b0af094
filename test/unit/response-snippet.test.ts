import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RESPONSE_SNIPPET_BYTES, responseSnippet } from '../../lib/response-snippet';

/** What a delivery attempt keeps of the receiver's answer (lib/response-snippet.ts). */
describe('responseSnippet', () => {
  it('keeps a text body whole up to 1 KiB, JSON and no content type alike', () => {
    assert.equal(responseSnippet('{"ok":false,"reason":"quota"}', { 'content-type': 'application/json; charset=utf-8' }), '{"ok":false,"reason":"quota"}');
    assert.equal(responseSnippet('line one\r\n\tline two', {}), 'line one\r\n\tline two');
    const exactly = 'a'.repeat(RESPONSE_SNIPPET_BYTES);
    assert.equal(responseSnippet(exactly, { 'content-type': 'text/plain' }), exactly);
  });

  it('cuts at 1,024 bytes, never inside a character', () => {
    assert.equal(responseSnippet('b'.repeat(5000), {}), 'b'.repeat(1024));
    // 'x' then 2-byte characters: byte 1,024 is the middle of one, which is left out whole.
    const cut = responseSnippet(`x${'é'.repeat(700)}`, { 'content-type': 'text/plain' })!;
    assert.equal(cut, `x${'é'.repeat(511)}`);
    assert.equal(Buffer.byteLength(cut), 1023);
    // 4-byte characters (a surrogate pair in JavaScript): 256 fit exactly.
    assert.equal(responseSnippet('😀'.repeat(300), {}), '😀'.repeat(256));
  });

  it('keeps nothing of an empty body, a binary type, a compressed body or bytes that are not UTF-8 text', () => {
    assert.equal(responseSnippet('', { 'content-type': 'text/plain' }), null);
    assert.equal(responseSnippet('PNG-ish', { 'content-type': 'image/png' }), null);
    assert.equal(responseSnippet('abc', { 'content-type': 'application/octet-stream' }), null);
    assert.equal(responseSnippet('abc', { 'content-type': 'text/plain', 'content-encoding': 'gzip' }), null);
    assert.equal(responseSnippet(Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff]).toString('utf8'), {}), null);
    assert.equal(responseSnippet('nul\u0000inside', {}), null);
    assert.equal(responseSnippet('text', { 'content-encoding': 'identity' }), 'text');
  });
});
