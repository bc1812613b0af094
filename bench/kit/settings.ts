/** A bench's settings: environment variables, checked once when the bench starts. */

/** A non-negative integer; `fallback` when unset or empty. */
export function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

/** A positive number (a rate: `0.5` per second is fine); `fallback` when unset or empty. */
export function rateSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

/** A comma-separated list, trimmed, empty items dropped; `fallback` (also a comma list) when unset. */
export function listSetting(name: string, fallback: string): string[] {
  return (process.env[name] ?? fallback).split(',').map((s) => s.trim()).filter(Boolean);
}

/** A list whose items must be among `allowed`. */
export function choiceSetting<T extends string>(name: string, fallback: string, allowed: readonly T[]): T[] {
  const values = listSetting(name, fallback);
  for (const v of values) if (!allowed.includes(v as T)) throw new Error(`${name}: unknown "${v}" (expected some of ${allowed.join(', ')})`);
  return values as T[];
}

/** A JSON object (worker options for tuning runs); `{}` when unset. */
export function jsonSetting<T extends object>(name: string): Partial<T> {
  const raw = process.env[name];
  if (!raw) return {};
  try {
    return JSON.parse(raw) as Partial<T>;
  } catch {
    throw new Error(`${name} must be a JSON object, got "${raw}"`);
  }
}
