/**
 * Durations written the way Go and Temporal write them, restricted to whole units: "10s", "5m", "1h30m",
 * "2d", "1500ms". Units run from largest to smallest, each at most once, so "1h30m" is valid and
 * "30m1h" or "1h1h" are not. No signs, no fractions, no spaces.
 */
const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
  ['ms', 1],
] as const;

const PART = /(\d{1,15})(ms|d|h|m|s)/y;

/**
 * A duration's form as a JSON Schema pattern can state it (ASCII digits, each part a unit), for the OpenAPI document;
 * the order of units and the range are parseDuration's and the field's.
 */
export const DURATION_SHAPE = /^(?:[0-9]{1,15}(?:ms|d|h|m|s))+$/;

export const SECOND_MS = 1_000;
export const DAY_MS = 86_400_000;

/** Milliseconds in `text`, or throws an Error whose message says what is wrong. */
export function parseDuration(text: string): number {
  if (text.length === 0) throw new Error('is empty; use a duration such as "10m" or "1h30m"');
  let total = 0;
  let lastUnit = -1;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const start = PART.lastIndex;
    const match = PART.exec(text);
    if (!match || match.index !== start) {
      throw new Error(`"${text}" is not a duration; use whole numbers with units d, h, m, s, ms, e.g. "10m" or "1h30m"`);
    }
    const unit = UNITS.findIndex(([name]) => name === match[2]);
    if (unit <= lastUnit) throw new Error(`"${text}" is not a duration; write each unit once, largest first (e.g. "1h30m")`);
    lastUnit = unit;
    total += Number(match[1]) * UNITS[unit]![1];
  }
  if (!Number.isSafeInteger(total)) throw new Error(`"${text}" is too long a duration`);
  return total;
}

/** parseDuration that answers a reason instead of throwing: `{ ms }` or `{ error }`. */
export function tryParseDuration(text: string): { ms: number } | { error: string } {
  try {
    return { ms: parseDuration(text) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
