/**
 * Workload scale of a benchmark run (`npm run bench -- --scale 0.1` in CI): data sizes and job
 * counts are multiplied by it, never below a floor that keeps the comparison meaningful. Set once
 * by bench/run.ts before any benchmark module is imported (their size constants read it then).
 */
let factor = 1;

export function setScale(value: number): void {
  if (!(value > 0 && value <= 10)) throw new Error(`--scale: expected a number in (0, 10], got ${value}`);
  factor = value;
}

export function scale(): number {
  return factor;
}

let files: number[] | undefined;

/** Workspace sizes asked for with `--files 10000,100000` (benchmarks that build one tree read it). */
export function setFileCounts(value: string): void {
  const counts = value.split(',').map(Number);
  if (counts.length === 0 || counts.some((n) => !Number.isInteger(n) || n < 10 || n > 10_000_000)) throw new Error(`--files: expected whole numbers (10 to 10,000,000) separated by commas, got ${value}`);
  files = counts;
}

/** The sizes from `--files`, or undefined. */
export function fileCounts(): readonly number[] | undefined {
  return files;
}

/** `n` at the current scale, at least `min`. */
export function scaled(n: number, min: number): number {
  return Math.max(min, Math.round(n * factor));
}
