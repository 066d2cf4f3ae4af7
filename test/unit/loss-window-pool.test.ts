// Pooling loss-window runs: one sample per provider over every run, verdicts summed.
import { describe, expect, it } from 'vitest';
import { poolLossWindows } from '../../bench/lib/loss-window-pool.js';
import { summarize } from '../../bench/lib/stats.js';

const run = (startedAt: string, windows: number[], lost: number[], judged: Record<string, number> = {}) => ({
  startedAt,
  params: { files: 100_000, lossWindow: { vercel: { tornTrees: 0, ackedTurnsLost: 0, ...judged } } },
  metrics: { 'vercel:host_kill_loss_ms': summarize(windows, 'ms'), 'vercel:host_kill_lost_work_ms': summarize(lost, 'ms') },
});

describe('poolLossWindows', () => {
  it('takes the quantiles over the windows of every run together', () => {
    const windows = Array.from({ length: 101 }, (_, i) => i * 100);
    const pooled = poolLossWindows([run('a', windows.slice(0, 40), [1, 2]), run('b', windows.slice(40), [3])]);
    expect(pooled.local).toBeUndefined();
    expect(pooled.vercel).toMatchObject({ n: 101, p50: 5_000, p99: 9_900, max: 10_000, lostWork: { max: 3 } });
    expect(pooled.vercel!.runs).toEqual([
      { startedAt: 'a', files: 100_000, n: 40 },
      { startedAt: 'b', files: 100_000, n: 61 },
    ]);
  });

  it('sums each verdict over the runs, so one bad run shows in the pool', () => {
    const pooled = poolLossWindows([run('a', [1_000], [0]), run('b', [2_000], [0], { tornTrees: 1 })]);
    expect(pooled.vercel!.verdicts).toMatchObject({ tornTrees: 1, ackedTurnsLost: 0 });
  });
});
