type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The JSON merge patch (RFC 7386) that turns `before` into `after`: changed keys, nested objects patched
 * key by key, removed keys as null. The API applies configJson updates this way (docs/api.md § Conventions).
 */
export function mergePatch(before: Json, after: Json): Json {
  const patch: Json = {};
  for (const key of Object.keys(before)) if (!(key in after)) patch[key] = null;
  for (const [key, value] of Object.entries(after)) {
    const old = before[key];
    if (isObject(old) && isObject(value)) {
      const inner = mergePatch(old, value);
      if (Object.keys(inner).length) patch[key] = inner;
    } else if (JSON.stringify(old) !== JSON.stringify(value)) {
      patch[key] = value;
    }
  }
  return patch;
}
