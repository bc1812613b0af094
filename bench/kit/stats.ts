/** The figures every bench prints: percentiles, medians, and how they are shown. */

/** Nearest-rank percentile (`p` 0–100) of `values`; NaN when there are none. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
}

/** The median: the middle value, or the mean of the two middle ones; NaN when there are none. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (!sorted.length) return NaN;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** `12 ms`, or `n/a` for a figure that could not be measured. */
export const ms = (v: number): string => (Number.isFinite(v) ? `${v.toFixed(0)} ms` : 'n/a');

/** ours / bare with two decimals, or `n/a`. */
export const ratio = (ours: number, bare: number): string => (bare > 0 && Number.isFinite(ours) ? (ours / bare).toFixed(2) : 'n/a');
