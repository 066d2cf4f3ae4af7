/**
 * A one-line progress bar on stderr for long commands: percentage, counts, rate and ETA
 * (`persist ws-1 [######..........]  40% 8000/20000 1.2k/s ETA 10s link`). Redrawn in place on
 * a terminal, printed at most every 10 % otherwise so logs stay readable. A job that reports
 * only phases (`{ step, percent }`) shows the percentage, the step and an ETA from the percent's
 * rate.
 */
import type { CliIO } from './output.js';

export interface ProgressBar {
  /** `done` of `total` items (rate in items per second). */
  update(done: number, total?: number, note?: string): void;
  /** A phase of a job that reports a percentage, not counts. */
  phase(percent: number, step?: string): void;
  done(note?: string): void;
}

export interface ProgressBarOptions {
  readonly isTty?: boolean;
  readonly now?: () => number;
}

// Where the rate is measured from: the first report of the current unit (counts of a total, or percent).
interface Baseline {
  readonly unit: string;
  readonly at: number;
  readonly done: number;
}

/** `1234` → `1.2k`, for rates. */
export function compactNumber(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return n >= 10 ? String(Math.round(n)) : n.toFixed(1);
}

/** Seconds as `45s`, `3m05s`, `2h04m`. */
export function shortDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3_600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3_600)}h${String(Math.floor((s % 3_600) / 60)).padStart(2, '0')}m`;
}

/** Rate (per second) and ETA from a baseline; null until a second has passed and something moved. */
export function rateAndEta(baseline: Baseline, done: number, total: number | undefined, now: number): { rate: number; etaS: number | null } | null {
  const elapsedS = (now - baseline.at) / 1_000;
  const moved = done - baseline.done;
  if (elapsedS < 1 || moved <= 0) return null;
  const rate = moved / elapsedS;
  return { rate, etaS: total === undefined ? null : Math.max(0, total - done) / rate };
}

export function progressBar(io: CliIO, label: string, options: ProgressBarOptions = {}): ProgressBar {
  const isTty = options.isTty ?? Boolean(process.stderr.isTTY);
  const now = options.now ?? Date.now;
  let lastDecile = -1;
  let baseline: Baseline | null = null;

  const emit = (line: string, decile: number) => {
    if (isTty) {
      io.stderr(`\r${line}\x1b[K`);
      return;
    }
    if (decile !== lastDecile) {
      lastDecile = decile;
      io.stderr(`${line}\n`);
    }
  };
  const measure = (unit: string, done: number, total: number | undefined) => {
    if (!baseline || baseline.unit !== unit || done < baseline.done) baseline = { unit, at: now(), done };
    return rateAndEta(baseline, done, total, now());
  };
  const bar = (pct: number) => {
    const width = 24;
    const filled = Math.round((pct / 100) * width);
    return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(pct).padStart(3)}%`;
  };

  return {
    update(done, total, note) {
      const pct = total ? Math.min(100, Math.floor((done / total) * 100)) : undefined;
      const speed = measure(`count/${total ?? '-'}`, done, total);
      const parts = [label, ...(pct === undefined ? [] : [bar(pct)]), total ? `${done}/${total}` : String(done)];
      if (speed) parts.push(`${compactNumber(speed.rate)}/s`, ...(speed.etaS === null ? [] : [`ETA ${shortDuration(speed.etaS)}`]));
      if (note) parts.push(note);
      emit(parts.join(' '), total ? Math.floor((done / total) * 10) : done);
    },
    phase(percent, step) {
      const pct = Math.max(0, Math.min(100, Math.floor(percent)));
      const speed = measure('percent', pct, 100);
      const parts = [label, bar(pct)];
      if (speed?.etaS != null && pct < 100) parts.push(`ETA ${shortDuration(speed.etaS)}`);
      if (step) parts.push(step);
      emit(parts.join(' '), Math.floor(pct / 10));
    },
    done(note) {
      if (isTty) io.stderr(`\r${label} done${note ? ` ${note}` : ''}\x1b[K\n`);
    },
  };
}
