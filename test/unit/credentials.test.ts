import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeCursor, encodeCursor } from '../../api/pagination';
import { hashPassword, verifyPassword } from '../../api/services/passwords';
import { createTokenService } from '../../api/services/tokens';

describe('passwords', () => {
  it('hashes with a salt and verifies', async () => {
    const a = await hashPassword('s3cret-pass');
    const b = await hashPassword('s3cret-pass');
    assert.notEqual(a, b);
    assert.equal(await verifyPassword('s3cret-pass', a), true);
    assert.equal(await verifyPassword('s3cret-pasS', a), false);
    assert.equal(await verifyPassword('s3cret-pass', 'garbage'), false);
  });
});

describe('access tokens', () => {
  const tokens = createTokenService({ jwtSecret: 'k'.repeat(40), accessTokenTtlSeconds: 900 });
  it('round-trips claims and refuses tampering', () => {
    const token = tokens.signAccessToken({ sub: 'u1', acc: 'a1' });
    assert.deepEqual(tokens.verifyAccessToken(token), { sub: 'u1', acc: 'a1' });
    const [h, p, s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), sub: 'u2' })).toString('base64url');
    assert.equal(tokens.verifyAccessToken(`${h}.${forged}.${s}`), null);
    assert.equal(tokens.verifyAccessToken('not.a.jwt'), null);
  });
});

describe('cursors', () => {
  it('round-trip and refuse garbage', () => {
    const key = { createdAt: '2026-11-21 11:00:00.123456+00', id: '0b5e8f2a-1c3d-4e5f-8a9b-0c1d2e3f4a5b' };
    assert.deepEqual(decodeCursor(encodeCursor(key)), key);
    const crafted = (createdAt: string) => Buffer.from(JSON.stringify([createdAt, key.id])).toString('base64url');
    assert.deepEqual(decodeCursor(crafted('1969-12-31 23:15:30-00:44:30')).createdAt, '1969-12-31 23:15:30-00:44:30');
    for (const bad of ['', 'x', Buffer.from('[1,2]').toString('base64url'), Buffer.from('["nope","0b5e8f2a-1c3d-4e5f-8a9b-0c1d2e3f4a5b"]').toString('base64url'),
      crafted('1'), crafted('2026-02-29 00:00:00+00'), crafted('2026-01-01T00:00:00.000Z')]) {
      assert.throws(() => decodeCursor(bad), /cursor/);
    }
  });
});
