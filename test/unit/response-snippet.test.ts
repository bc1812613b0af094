import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RESPONSE_SNIPPET_BYTES, responseSnippet } from '../../lib/response-snippet';

const utf8 = (text: string) => Buffer.from(text, 'utf8');

/** What a delivery attempt keeps of the receiver's answer (lib/response-snippet.ts). */
describe('responseSnippet', () => {
  it('keeps a text body whole up to 1 KiB, JSON and no content type alike', () => {
    assert.equal(responseSnippet(utf8('{"ok":false,"reason":"quota"}'), { 'content-type': 'application/json; charset=utf-8' }), '{"ok":false,"reason":"quota"}');
    assert.equal(responseSnippet(utf8('line one\r\n\tline two'), {}), 'line one\r\n\tline two');
    const exactly = 'a'.repeat(RESPONSE_SNIPPET_BYTES);
    assert.equal(responseSnippet(utf8(exactly), { 'content-type': 'text/plain' }), exactly);
  });

  it('cuts at 1,024 bytes, never inside a character', () => {
    assert.equal(responseSnippet(utf8('b'.repeat(5000)), {}), 'b'.repeat(1024));
    // 'x' then 2-byte characters: byte 1,024 is the middle of one, which is left out whole.
    const cut = responseSnippet(utf8(`x${'é'.repeat(700)}`), { 'content-type': 'text/plain' })!;
    assert.equal(cut, `x${'é'.repeat(511)}`);
    assert.equal(Buffer.byteLength(cut), 1023);
    // 4-byte characters (a surrogate pair in JavaScript): 256 fit exactly.
    assert.equal(responseSnippet(utf8('😀'.repeat(300)), {}), '😀'.repeat(256));
  });

  it('keeps nothing of an empty body, a binary type, a compressed body or bytes that are not UTF-8 text', () => {
    assert.equal(responseSnippet(utf8(''), { 'content-type': 'text/plain' }), null);
    assert.equal(responseSnippet(utf8('PNG-ish'), { 'content-type': 'image/png' }), null);
    assert.equal(responseSnippet(utf8('abc'), { 'content-type': 'application/octet-stream' }), null);
    assert.equal(responseSnippet(utf8('abc'), { 'content-type': 'text/plain', 'content-encoding': 'gzip' }), null);
    assert.equal(responseSnippet(Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff]), {}), null);
    assert.equal(responseSnippet(utf8('nul\u0000inside'), {}), null);
    assert.equal(responseSnippet(utf8('text'), { 'content-encoding': 'identity' }), 'text');
  });

  it('judges text from the bytes received: U+FFFD written in UTF-8 is text, a byte that is not UTF-8 is not, whatever follows the cut', () => {
    // The replacement character itself (EF BF BD) is valid UTF-8: a decoded-text check could not tell it from a bad byte.
    assert.equal(responseSnippet(utf8('unknown glyph: \uFFFD'), { 'content-type': 'text/plain' }), 'unknown glyph: \uFFFD');
    assert.equal(responseSnippet(Buffer.concat([utf8('caf'), Buffer.from([0xe9])]), {}), null, 'latin-1 é: not UTF-8');
    assert.equal(responseSnippet(Buffer.from([0xc3]), {}), null, 'a character cut short at the end of the body');
    assert.equal(responseSnippet(Buffer.from([0xed, 0xa0, 0x80]), {}), null, 'an encoded surrogate');
    // Only the kept bytes are judged: a bad byte past the first 1,024 leaves the snippet.
    assert.equal(responseSnippet(Buffer.concat([utf8('c'.repeat(1024)), Buffer.from([0xff])]), {}), 'c'.repeat(1024));
  });
});
