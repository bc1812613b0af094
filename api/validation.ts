import type { z } from 'zod';
import type { Config } from '../lib/secret-config';
import { ValidationError } from './errors';

/**
 * Validation a route schema can't express alone (e.g. a type-dependent config after a partial update).
 * Errors read like the route validation's: "body.configJson.botToken: is required".
 */
export function parseWith<T extends z.ZodType>(schema: T, value: unknown, field: string): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = [field, ...issue.path.map(String)].join('.');
  throw new ValidationError(`${where}: ${isMissing(value, issue.path) ? 'is required' : issue.message}`);
}

/** True when the value a validation issue points at is absent (so the message can say "is required"). */
export function isMissing(root: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return root === undefined;
  let node = root;
  for (const key of path.slice(0, -1)) {
    if (node === null || typeof node !== 'object') return false;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node !== null && typeof node === 'object' && !Object.hasOwn(node, path[path.length - 1]!);
}

/**
 * RFC 7386 JSON merge patch: keys in `patch` replace, `null` removes, nested objects merge.
 * Used for configJson in partial updates, so `{ "configJson": { "guildId": "…" } }` keeps the rest.
 */
export function mergePatch(target: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (typeof value === 'object' && !Array.isArray(value)) {
      const base = out[key];
      out[key] = mergePatch(base && typeof base === 'object' && !Array.isArray(base) ? (base as Record<string, unknown>) : {}, value as Record<string, unknown>);
    } else out[key] = value;
  }
  return out;
}

/**
 * What an update makes of a typed config (connectors, tools, triggers) before validating it as a whole: the
 * patch merged onto the current config when the type stays, or onto nothing when the type changes (the patch
 * is then the whole new config, and a null in it is an absent field, as in any merge patch: a field with a
 * default gets it). A null for a field that `schema` (the config of the resulting type) does not have is refused
 * as the validation of the result refuses any other value there: the merge would drop it unremarked.
 */
export function patchTypedConfig(current: Config | null, patch: Config, schema: Pick<z.ZodObject, 'shape'>, field: string): Config {
  const unknown = Object.keys(patch).filter((key) => patch[key] === null && !Object.hasOwn(schema.shape, key));
  if (unknown.length > 0) {
    throw new ValidationError(`${field}: Unrecognized key${unknown.length > 1 ? 's' : ''}: ${unknown.map((key) => JSON.stringify(key)).join(', ')}`);
  }
  return mergePatch(current ?? {}, patch);
}
