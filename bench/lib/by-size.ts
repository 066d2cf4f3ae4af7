/**
 * Benchmarks measured at several workspace sizes (`--files 10000,100000`): each size is measured
 * on its own, then the results go side by side into one report, every metric and profile entry
 * prefixed with its size (`100000:persist_ms`).
 */
import type { BenchResult, TargetCheck } from './report.js';
import { fileCounts, scaled } from './scale.js';
import type { Summary } from './stats.js';

/** The measurement at one size. */
export interface SizeResult {
  readonly params: Record<string, unknown>;
  readonly metrics: Record<string, Summary>;
  readonly profile: Record<string, Summary>;
  readonly targets: TargetCheck[];
  readonly notes?: readonly string[];
}

/**
 * Runs `measure` at each size from `--files` (else `defaultFiles` at the current scale, at least
 * `minFiles`); `label` prefixes progress lines and targets when there are several sizes.
 */
export async function bySize(
  defaultFiles: number,
  minFiles: number,
  shared: Record<string, unknown>,
  measure: (files: number, label: string) => Promise<SizeResult>,
): Promise<BenchResult> {
  const sizes = fileCounts() ?? [scaled(defaultFiles, minFiles)];
  const results: SizeResult[] = [];
  for (const files of sizes) results.push(await measure(files, sizes.length > 1 ? `${files} files: ` : ''));
  const notes = [...new Set(results.flatMap((r) => r.notes ?? []))];
  if (results.length === 1) return { ...results[0]!, notes };
  const prefixed = (record: Record<string, Summary>, files: number) => Object.fromEntries(Object.entries(record).map(([k, v]) => [`${files}:${k}`, v]));
  return {
    params: { sizes, ...shared, runs: results.map((r) => r.params) },
    metrics: Object.assign({}, ...results.map((r, i) => prefixed(r.metrics, sizes[i]!))) as Record<string, Summary>,
    profile: Object.assign({}, ...results.map((r, i) => prefixed(r.profile, sizes[i]!))) as Record<string, Summary>,
    targets: results.flatMap((r) => r.targets),
    notes,
  };
}
