import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { restoreMasked, restoreMaskedValue } from '../../api/services/masked-secrets';
import { allPaths, openConfig, presentConfig, sealConfig } from '../../lib/secret-config';
import { createSecretBox, isMasked, maskSecret } from '../../lib/secrets';

const box = createSecretBox(Buffer.alloc(32, 1));

describe('secret box (AES-256-GCM)', () => {
  it('round-trips and never repeats a ciphertext', () => {
    const a = box.seal('xoxb-123456789');
    const b = box.seal('xoxb-123456789');
    assert.notEqual(a, b);
    assert.match(a, /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.ok(!a.includes('xoxb'));
    assert.equal(box.open(a), 'xoxb-123456789');
    assert.equal(box.open(box.seal('')), '');
  });

  it('refuses a tampered ciphertext and the wrong key', () => {
    const sealed = box.seal('top secret value');
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[2]!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    assert.throws(() => box.open([parts[0], parts[1], flipped.toString('base64url'), parts[3]].join('.')));
    assert.throws(() => createSecretBox(Buffer.alloc(32, 2)).open(sealed));
    assert.throws(() => box.open('plaintext'));
    assert.throws(() => createSecretBox(Buffer.alloc(16)));
  });

  it('masks as •••• plus the last four, and nothing of a short secret', () => {
    assert.equal(maskSecret('abcdefgh1234'), '••••1234');
    assert.equal(maskSecret('short'), '••••');
    // Code points, not UTF-16 units: no half of a surrogate pair, and an emoji counts as one character.
    assert.equal(maskSecret('token-🔑x🔑'), '••••-🔑x🔑');
    assert.equal(maskSecret('🔑🔑🔑🔑🔑🔑🔑'), '••••', 'seven characters are too short to show any');
    assert.ok(isMasked('••••1234'));
    assert.ok(!isMasked('1234'));
    assert.ok(!isMasked(42));
  });
});

describe('secrets inside a config', () => {
  const paths = [['botToken'], ['headers', 'Authorization'], ['absent']];
  const plain = { botToken: 'bot-token-0001', guildId: 'g1', headers: { Authorization: 'Bearer abcdefgh', Accept: 'json' } };

  it('seals only the secret paths, opens them back, leaves the input untouched', () => {
    const stored = sealConfig(plain, paths, box);
    assert.equal(stored.guildId, 'g1');
    assert.equal((stored.headers as Record<string, string>).Accept, 'json');
    assert.ok(!JSON.stringify(stored).includes('bot-token-0001'));
    assert.ok(!JSON.stringify(stored).includes('abcdefgh'));
    assert.deepEqual(openConfig(stored, paths, box), plain);
    assert.equal(plain.botToken, 'bot-token-0001');
  });

  it('presents masks except for the revealed paths', () => {
    assert.deepEqual(presentConfig(plain, paths), { ...plain, botToken: '••••0001', headers: { Authorization: '••••efgh', Accept: 'json' } });
    const shown = presentConfig(plain, paths, allPaths(plain, paths));
    assert.deepEqual(shown, plain);
    assert.equal(allPaths(plain, paths).size, 2);
  });

  it('keeps the current secret when its mask is sent back and reveals only what changed', () => {
    const next = { ...plain, botToken: '••••0001', headers: { Authorization: 'Bearer new-token', Accept: 'json' } };
    const { config, revealed } = restoreMasked(next, plain, paths, 'body.configJson');
    assert.equal(config.botToken, 'bot-token-0001');
    assert.equal((config.headers as Record<string, string>).Authorization, 'Bearer new-token');
    assert.deepEqual(presentConfig(config, paths, revealed), { ...config, botToken: '••••0001' });
  });

  it('refuses a mask that is not the current secret\'s', () => {
    assert.throws(() => restoreMasked({ botToken: '••••9999' }, plain, paths, 'body.configJson'), /body\.configJson\.botToken: a masked value/);
    assert.throws(() => restoreMasked({ botToken: '••••0001' }, {}, paths, 'body.configJson'), /masked value/);
  });

  it('applies the same rules to a single value', () => {
    assert.deepEqual(restoreMaskedValue('••••cret', 'my-secret', 'body.secret'), { value: 'my-secret', revealed: false });
    assert.deepEqual(restoreMaskedValue('new-secret', 'my-secret', 'body.secret'), { value: 'new-secret', revealed: true });
    assert.throws(() => restoreMaskedValue('••••cret', null, 'body.secret'), /body\.secret: a masked value/);
  });
});
