import { describe, expect, it } from 'vitest';
import { compactNumber, progressBar, rateAndEta, shortDuration } from '../../src/cli/progress-bar.js';
import { showJobProgress } from '../../src/cli/follow-job.js';

function capture(isTty: boolean) {
  const lines: string[] = [];
  let t = 0;
  const bar = progressBar({ stdout: () => undefined, stderr: (s) => lines.push(s) }, 'persist ws-1', { isTty, now: () => t });
  return { bar, lines, advance: (ms: number) => (t += ms) };
}

describe('progress bar', () => {
  it('shows the rate and the ETA once a second has passed, from the first report', () => {
    const { bar, lines, advance } = capture(true);
    bar.update(1_000, 20_000, 'link');
    expect(lines.at(-1)).not.toMatch(/\/s|ETA/);
    advance(2_000);
    bar.update(5_000, 20_000, 'link');
    // 4,000 files in 2 s = 2,000/s; 15,000 left = 7.5 s, rounded to 8 s.
    expect(lines.at(-1)).toBe('\rpersist ws-1 [######..................]  25% 5000/20000 2.0k/s ETA 8s link\x1b[K');
  });

  it('gives a phase-only job (step and percent) a bar, its step and an ETA from the percent rate', () => {
    const { bar, lines, advance } = capture(true);
    bar.phase(10, 'link');
    advance(10_000);
    bar.phase(50, 'scan');
    expect(lines.at(-1)).toBe('\rpersist ws-1 [############............]  50% ETA 13s scan\x1b[K');
  });

  it('prints at most one line per 10 % off a terminal', () => {
    const { bar, lines } = capture(false);
    for (let done = 0; done <= 1_000; done += 10) bar.update(done, 1_000);
    expect(lines).toHaveLength(11);
    expect(lines.every((l) => l.endsWith('\n') && !l.startsWith('\r'))).toBe(true);
  });

  it('resets the rate when the unit changes (counts, then percent)', () => {
    const { bar, lines, advance } = capture(true);
    bar.update(0, 100);
    advance(5_000);
    bar.update(100, 100);
    expect(lines.at(-1)).toContain('20/s ETA 0s');
    bar.phase(70, 'commit');
    expect(lines.at(-1)).not.toContain('ETA');
  });

  it('renders what jobs report: counts, phases, migrations; ignores anything else', () => {
    const { bar, lines } = capture(false);
    showJobProgress(bar, { step: 'scan', percent: 50 });
    showJobProgress(bar, { done: 3, total: 10, migrated: 2, failed: 1 });
    showJobProgress(bar, 'garbage');
    showJobProgress(bar, { percent: 'x' });
    expect(lines).toEqual(['persist ws-1 [############............]  50% scan\n', 'persist ws-1 [#######.................]  30% 3/10 migrated 2, failed 1\n']);
  });

  it('formats numbers and durations', () => {
    expect([compactNumber(3.25), compactNumber(42), compactNumber(1_250), compactNumber(3_400_000)]).toEqual(['3.3', '42', '1.3k', '3.4M']);
    expect([shortDuration(0.4), shortDuration(59), shortDuration(185), shortDuration(7_440)]).toEqual(['0s', '59s', '3m05s', '2h04m']);
    expect(rateAndEta({ unit: 'x', at: 0, done: 0 }, 10, undefined, 500)).toBeNull();
    expect(rateAndEta({ unit: 'x', at: 0, done: 0 }, 10, undefined, 2_000)).toEqual({ rate: 5, etaS: null });
  });
});
