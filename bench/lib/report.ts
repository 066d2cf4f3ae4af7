/**
 * What a benchmark returns and how it is shown: one JSON object per benchmark on stdout (for
 * scripts and BENCHMARKS.md), a human table on stderr.
 */
import type { Machine } from './machine.js';
import type { Summary } from './stats.js';

export interface BenchContext {
  /** Repeats requested with `--repeats` (each benchmark has its own default). */
  readonly repeats: number | undefined;
  /** Progress line to stderr. */
  log(line: string): void;
}

/** A target from the issue, checked against a measured median. */
export interface TargetCheck {
  readonly name: string;
  readonly value: number;
  readonly op: '<=' | '>=' | '<';
  readonly threshold: number;
  readonly met: boolean;
}

export interface BenchResult {
  /** Workload parameters (sizes, counts, concurrency, repeats). */
  readonly params: Readonly<Record<string, unknown>>;
  /** Headline measurements, fleet and baseline side by side. */
  readonly metrics: Readonly<Record<string, Summary>>;
  readonly targets: readonly TargetCheck[];
  /** Where the time goes (optional breakdown). */
  readonly profile?: Readonly<Record<string, Summary>>;
  /** Findings in words (causes of gaps, caveats). */
  readonly notes: readonly string[];
  /** Correctness violations seen (e.g. acknowledged work lost): the run fails after its report. */
  readonly violations?: number;
}

/** A benchmark: one file in bench/, one line in bench/registry.ts. */
export type Benchmark = (ctx: BenchContext) => Promise<BenchResult>;

export interface BenchReport extends BenchResult {
  readonly benchmark: string;
  readonly command: string;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly machine: Machine;
}

/** Checks `value op threshold`. */
export function target(name: string, value: number, op: TargetCheck['op'], threshold: number): TargetCheck {
  const met = op === '<=' ? value <= threshold : op === '>=' ? value >= threshold : value < threshold;
  return { name, value, op, threshold, met };
}

// Right-aligns cells into columns.
function columns(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')).join('\n');
}

// Table rows of a group of summaries.
function summaryRows(group: Readonly<Record<string, Summary>>): string[][] {
  return Object.entries(group).map(([name, s]) => [name, String(s.median), String(s.p10), String(s.p90), String(s.min), String(s.max), s.unit, String(s.n)]);
}

/** The human view of a report. */
export function formatTable(report: BenchReport): string {
  const header = ['metric', 'median', 'p10', 'p90', 'min', 'max', 'unit', 'n'];
  const lines = [`== ${report.benchmark} (${(report.durationMs / 1000).toFixed(1)} s)  ${JSON.stringify(report.params)}`];
  lines.push(columns([header, ...summaryRows(report.metrics)]));
  if (report.profile && Object.keys(report.profile).length > 0) {
    lines.push('-- profile');
    lines.push(columns([header, ...summaryRows(report.profile)]));
  }
  for (const t of report.targets) lines.push(`${t.met ? 'MET ' : 'MISS'}  ${t.name}: ${t.value} ${t.op} ${t.threshold}`);
  for (const note of report.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}
