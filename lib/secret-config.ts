import { isSealed, maskSecret, type SecretBox } from './secrets';

/**
 * Secret values inside a resource's configJson (docs/api.md § Secrets). A path names one string value, e.g.
 * ['botToken'] or ['headers', 'Authorization']. Stored configs hold sealed values at those paths;
 * responses hold masks, except for the values the current request itself set. The API seals and
 * presents; the worker opens (a run's tool secrets), so this lives in lib/, shared by both.
 */
export type SecretPath = readonly string[];
/** A resource's configJson. */
export type Config = Record<string, unknown>;

/** How a path is named in a `revealed` set. */
export const pathKey = (path: SecretPath) => path.join('\u0000');

/** The value at `path`, or undefined when any key on the way is missing (own properties only). */
export function valueAtSecretPath(config: Config, path: SecretPath): unknown {
  let node: unknown = config;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Config)[key];
  }
  return node;
}

/** Copy of `config` with the string at each present path replaced by `change(value, path)`. */
export function mapSecrets(config: Config, paths: readonly SecretPath[], change: (value: string, path: SecretPath) => string): Config {
  const out = structuredClone(config);
  for (const path of paths) {
    const value = valueAtSecretPath(out, path);
    if (typeof value !== 'string') continue;
    const parent = valueAtSecretPath(out, path.slice(0, -1)) as Config;
    parent[path[path.length - 1]!] = change(value, path);
  }
  return out;
}

export const sealConfig = (plain: Config, paths: readonly SecretPath[], box: SecretBox) => mapSecrets(plain, paths, (v) => box.seal(v));

/**
 * The config with its secrets opened. A value at a secret path that is not sealed was stored before its
 * path counted as a secret (a custom tool's `X-Session` header, before every header but four did): it is
 * read as the plaintext it is, and sealed when the resource is next written.
 */
export const openConfig = (stored: Config, paths: readonly SecretPath[], box: SecretBox) =>
  mapSecrets(stored, paths, (v) => (isSealed(v) ? box.open(v) : v));

/** The response form: every secret masked except those in `revealed` (set by this request). */
export function presentConfig(plain: Config, paths: readonly SecretPath[], revealed: ReadonlySet<string> = new Set()): Config {
  return mapSecrets(plain, paths, (v, path) => (revealed.has(pathKey(path)) ? v : maskSecret(v)));
}

/** Every present secret path, for a create: all of them are shown in full in its response. */
export function allPaths(config: Config, paths: readonly SecretPath[]): Set<string> {
  return new Set(paths.filter((p) => typeof valueAtSecretPath(config, p) === 'string').map(pathKey));
}
