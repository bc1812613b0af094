import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (docs/api.md § Secrets): AES-256-GCM under SECRETS_KEY. A sealed value is
 * `v1.<iv>.<ciphertext>.<tag>` (base64url parts); the version prefix leaves room for key rotation.
 */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

const VERSION = 'v1';

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes');
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed) {
      const [version, iv, ciphertext, tag] = sealed.split('.');
      if (version !== VERSION || iv === undefined || ciphertext === undefined || tag === undefined) {
        throw new Error('not a sealed secret');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** Whether `value` has the form of a sealed value (`v1.<iv>.<ciphertext>.<tag>`); opening it may still fail. */
export function isSealed(value: string): boolean {
  return /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/.test(value);
}

export const MASK_PREFIX = '••••';

/**
 * `"••••" + last 4`; a secret shorter than 8 characters shows no characters at all. Characters are code
 * points, not UTF-16 units: a cut between the two halves of a surrogate pair (an emoji) would show half a
 * character, which no JSON client can send back (and Postgres can't store).
 */
export function maskSecret(plaintext: string): string {
  const chars = Array.from(plaintext);
  return chars.length >= 8 ? MASK_PREFIX + chars.slice(-4).join('') : MASK_PREFIX;
}

export function isMasked(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith(MASK_PREFIX);
}
