/**
 * A one-line progress bar on stderr for long commands (redrawn in place on a terminal, printed
 * at most every 10 % otherwise so logs stay readable).
 */
import type { CliIO } from './output.js';

export interface ProgressBar {
  update(done: number, total?: number, note?: string): void;
  done(note?: string): void;
}

export function progressBar(io: CliIO, label: string, isTty = Boolean(process.stderr.isTTY)): ProgressBar {
  let lastDecile = -1;
  const render = (done: number, total: number | undefined, note?: string) => {
    const pct = total ? Math.min(100, Math.floor((done / total) * 100)) : undefined;
    const width = 24;
    const filled = pct === undefined ? 0 : Math.round((pct / 100) * width);
    const bar = pct === undefined ? '' : `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(pct).padStart(3)}% `;
    return `${label} ${bar}${total ? `${done}/${total}` : done}${note ? ` ${note}` : ''}`;
  };
  return {
    update(done, total, note) {
      if (isTty) {
        io.stderr(`\r${render(done, total, note)}\x1b[K`);
        return;
      }
      const decile = total ? Math.floor((done / total) * 10) : done;
      if (decile !== lastDecile) {
        lastDecile = decile;
        io.stderr(`${render(done, total, note)}\n`);
      }
    },
    done(note) {
      if (isTty) io.stderr(`\r${label} done${note ? ` ${note}` : ''}\x1b[K\n`);
    },
  };
}
