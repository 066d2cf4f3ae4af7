/**
 * Pools loss-window runs: the host kill windows of several result files of `bench -- loss-window`
 * as one sample per provider (p50 / p99 / max over every workspace judged), with the verdicts
 * summed. A p99 needs about 100 windows; at 100,000 files one run of an hour or two gives fewer,
 * so the figure the README quotes for that size pools the runs listed beside it.
 */
import type { BenchReport } from './report.js';
import { percentile, summarize } from './stats.js';

const PROVIDERS = ['local', 'vercel'] as const;
/** Verdicts of `params.lossWindow[provider]` that must be 0 in every run. */
const VERDICTS = ['tornTrees', 'ackedTurnsLost', 'uploadOnlyResidueTrees', 'lagUnderLoss', 'rollingRestartLostBytes'] as const;

export interface PooledProvider {
  readonly runs: { readonly startedAt: string; readonly files: number; readonly n: number }[];
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly lostWork: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly verdicts: Record<(typeof VERDICTS)[number], number>;
}

type LossReport = Pick<BenchReport, 'startedAt' | 'metrics' | 'params'>;

/** One pooled summary per provider that any report judged (pure). */
export function poolLossWindows(reports: readonly LossReport[]): Partial<Record<(typeof PROVIDERS)[number], PooledProvider>> {
  const pooled: Partial<Record<(typeof PROVIDERS)[number], PooledProvider>> = {};
  for (const provider of PROVIDERS) {
    const windows: number[] = [];
    const lost: number[] = [];
    const runs: PooledProvider['runs'] = [];
    const verdicts = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<(typeof VERDICTS)[number], number>;
    for (const report of reports) {
      const samples = report.metrics[`${provider}:host_kill_loss_ms`]?.samples ?? [];
      if (samples.length === 0) continue;
      windows.push(...samples);
      lost.push(...(report.metrics[`${provider}:host_kill_lost_work_ms`]?.samples ?? []));
      runs.push({ startedAt: report.startedAt, files: Number(report.params.files), n: samples.length });
      const judged = (report.params.lossWindow as Record<string, Record<string, unknown>> | undefined)?.[provider] ?? {};
      for (const verdict of VERDICTS) verdicts[verdict] += Number(judged[verdict] ?? 0);
    }
    if (windows.length === 0) continue;
    const all = summarize(windows, 'ms');
    pooled[provider] = {
      runs,
      n: all.n,
      p50: all.median,
      p99: percentile(windows, 0.99),
      max: all.max,
      lostWork: { p50: percentile(lost, 0.5), p99: percentile(lost, 0.99), max: lost.length > 0 ? Math.max(...lost) : Number.NaN },
      verdicts,
    };
  }
  return pooled;
}
