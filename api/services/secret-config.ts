import { isMasked, maskSecret, type SecretBox } from '../../lib/secrets';
import { ValidationError } from '../errors';

/**
 * Secret values inside a resource's configJson (DESIGN §2). A path names one string value, e.g.
 * ['botToken'] or ['headers', 'Authorization']. Stored configs hold sealed values at those paths;
 * responses hold masks, except for the values the current request itself set.
 */
export type SecretPath = readonly string[];
export type Config = Record<string, unknown>;

/** How a path is named in a `revealed` set. */
export const pathKey = (path: SecretPath) => path.join('\u0000');

function read(config: Config, path: SecretPath): unknown {
  let node: unknown = config;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Config)[key];
  }
  return node;
}

/** Copy of `config` with the string at each present path replaced by `change(value, path)`. */
function mapSecrets(config: Config, paths: readonly SecretPath[], change: (value: string, path: SecretPath) => string): Config {
  const out = structuredClone(config);
  for (const path of paths) {
    const value = read(out, path);
    if (typeof value !== 'string') continue;
    const parent = read(out, path.slice(0, -1)) as Config;
    parent[path[path.length - 1]!] = change(value, path);
  }
  return out;
}

export const sealConfig = (plain: Config, paths: readonly SecretPath[], box: SecretBox) => mapSecrets(plain, paths, (v) => box.seal(v));

export const openConfig = (stored: Config, paths: readonly SecretPath[], box: SecretBox) => mapSecrets(stored, paths, (v) => box.open(v));

/** The response form: every secret masked except those in `revealed` (set by this request). */
export function presentConfig(plain: Config, paths: readonly SecretPath[], revealed: ReadonlySet<string> = new Set()): Config {
  return mapSecrets(plain, paths, (v, path) => (revealed.has(pathKey(path)) ? v : maskSecret(v)));
}

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
      if (read(current, path) !== value) revealed.add(pathKey(path)); // set or changed by this request
      return value;
    }
    const existing = read(current, path);
    if (typeof existing !== 'string' || maskSecret(existing) !== value) throw new ValidationError(`${field}.${path.join('.')}: ${mismatch}`);
    return existing;
  });
  return { config, revealed };
}

/** Every present secret path, for a create: all of them are shown in full in its response. */
export function allPaths(config: Config, paths: readonly SecretPath[]): Set<string> {
  return new Set(paths.filter((p) => typeof read(config, p) === 'string').map(pathKey));
}

/** The same rules for a single secret held outside a config (e.g. a webhook's `secret`). */
export function restoreMaskedValue(sent: string, current: string | null, field: string): { value: string; revealed: boolean } {
  if (!isMasked(sent)) return { value: sent, revealed: sent !== current };
  if (current === null || maskSecret(current) !== sent) {
    throw new ValidationError(`${field}: ${MASK_MISMATCH}`);
  }
  return { value: current, revealed: false };
}
