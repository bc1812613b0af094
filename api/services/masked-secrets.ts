import { mapSecrets, pathKey, valueAtSecretPath, type Config, type SecretPath } from '../../lib/secret-config';
import { isMasked, maskSecret } from '../../lib/secrets';
import { ValidationError } from '../errors';

/**
 * The API's half of secrets in configs (sealing, opening and masking are in lib/secret-config.ts):
 * what a masked value sent back in a request means, refused with a 400 when it matches no secret.
 */

const MASK_MISMATCH = 'a masked value can only be sent back unchanged; send the new secret in full';

/**
 * A masked value sent back in an update means "unchanged": it is replaced by the current secret.
 * Returns the config to store and the paths whose secret this request set (to show in full once).
 * `field` prefixes error messages, e.g. "body.configJson"; `mismatch` replaces the reason given for a
 * mask that stands for no current secret (e.g. when `current` is {} because no stored secret may stay).
 */
export function restoreMasked(
  next: Config,
  current: Config,
  paths: readonly SecretPath[],
  field: string,
  mismatch = MASK_MISMATCH,
): { config: Config; revealed: Set<string> } {
  const revealed = new Set<string>();
  const config = mapSecrets(next, paths, (value, path) => {
    if (!isMasked(value)) {
      if (valueAtSecretPath(current, path) !== value) revealed.add(pathKey(path)); // set or changed by this request
      return value;
    }
    const existing = valueAtSecretPath(current, path);
    if (typeof existing !== 'string' || maskSecret(existing) !== value) throw new ValidationError(`${field}.${path.join('.')}: ${mismatch}`);
    return existing;
  });
  return { config, revealed };
}

/** The same rules for a single secret held outside a config (e.g. a webhook's `secret`). */
export function restoreMaskedValue(sent: string, current: string | null, field: string): { value: string; revealed: boolean } {
  if (!isMasked(sent)) return { value: sent, revealed: sent !== current };
  if (current === null || maskSecret(current) !== sent) {
    throw new ValidationError(`${field}: ${MASK_MISMATCH}`);
  }
  return { value: current, revealed: false };
}
