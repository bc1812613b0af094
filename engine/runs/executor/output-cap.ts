/**
 * Bounds on what a run stores (docs/architecture.md § Limits and fairness): a run's output is at most 256 KiB of JSON, and so is each
 * step's. A value that does not fit is replaced by `{ truncated: true, bytes }` (`bytes`: the size of
 * its JSON), never cut in the middle, so what is stored stays valid, filterable JSON.
 */
export const MAX_RUN_OUTPUT_BYTES = 256 * 1024;
export const MAX_STEP_OUTPUT_BYTES = 256 * 1024;
/** Errors (a step's, a run's) are kept to this many characters. */
export const MAX_ERROR_LENGTH = 2000;

export interface Truncated {
  truncated: true;
  bytes: number;
}

/** Size of a value's JSON in UTF-8 bytes, as it is measured against the bounds. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
}

/** The value itself when its JSON fits in maxBytes, else `{ truncated: true, bytes }`. */
export function capValue(value: unknown, maxBytes: number): unknown {
  const bytes = jsonBytes(value);
  return bytes <= maxBytes ? value : ({ truncated: true, bytes } satisfies Truncated);
}

/** A place in an object whose value may be given up to make the whole fit. */
export interface Slot {
  holder: Record<string, unknown>;
  key: string;
}

/**
 * Makes `root` fit in maxBytes of JSON by replacing the values at `slots` with `{ truncated: true, bytes }`,
 * largest first, until it fits (in place). Replacing a value changes the root's JSON by exactly the
 * difference of the two values' JSON, so one measurement of each is enough. Returns whether it fits.
 */
export function fitSlots(root: unknown, slots: Slot[], maxBytes: number): boolean {
  let total = jsonBytes(root);
  if (total <= maxBytes) return true;
  const sized = slots
    .filter((s) => Object.hasOwn(s.holder, s.key))
    .map((s) => ({ ...s, bytes: jsonBytes(s.holder[s.key]) }))
    .sort((a, b) => b.bytes - a.bytes);
  for (const slot of sized) {
    if (total <= maxBytes) break;
    const marker: Truncated = { truncated: true, bytes: slot.bytes };
    const saved = slot.bytes - jsonBytes(marker);
    if (saved <= 0) continue;
    slot.holder[slot.key] = marker;
    total -= saved;
  }
  return total <= maxBytes;
}

/** An error message cut to MAX_ERROR_LENGTH characters (never between the two halves of a surrogate pair). */
export function capError(message: string): string {
  if (message.length <= MAX_ERROR_LENGTH) return message;
  let end = MAX_ERROR_LENGTH - 1;
  if (/[\uD800-\uDBFF]/.test(message[end - 1]!)) end--;
  return `${message.slice(0, end)}…`;
}
