/**
 * Summaries of repeated measurements: median with p10/p90 and min/max, so a noisy machine shows
 * as spread instead of hiding in a mean.
 */
export interface Summary {
  readonly unit: string;
  readonly n: number;
  readonly median: number;
  readonly p10: number;
  readonly p90: number;
  readonly min: number;
  readonly max: number;
  readonly samples: readonly number[];
}

// Linear-interpolated quantile of sorted values.
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

// Rounds to a sensible number of digits for reports.
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const magnitude = Math.abs(value) >= 100 ? 1 : Math.abs(value) >= 1 ? 2 : digits;
  return Number(value.toFixed(magnitude));
}

/** The `q` quantile (0..1, linear interpolation) of samples, rounded like a summary. */
export function percentile(samples: readonly number[], q: number): number {
  return round(quantile([...samples].sort((a, b) => a - b), q));
}

/** Summarises samples (in the order they were taken). */
export function summarize(samples: readonly number[], unit: string): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    unit,
    n: samples.length,
    median: round(quantile(sorted, 0.5)),
    p10: round(quantile(sorted, 0.1)),
    p90: round(quantile(sorted, 0.9)),
    min: round(sorted[0] ?? Number.NaN),
    max: round(sorted[sorted.length - 1] ?? Number.NaN),
    samples: samples.map((s) => round(s)),
  };
}

/** Per-repeat ratios a[i] / b[i] (paired samples of one interleaved run). */
export function pairedRatios(a: readonly number[], b: readonly number[]): number[] {
  return a.map((value, i) => value / b[i]!);
}
