/**
 * The time one persist walk may spend waiting for writes that may still be under way (see
 * store-open-file.ts `WRITE_STALL_NS`). A turn's last writes cost one wait of at most that long:
 * once the walk has waited, what was written before is old enough. A tree whose files are
 * rewritten without pause (a sandbox touching thousands of files in a loop) would make every
 * file wait: past the budget files are read at once, with the double read of a young file as the
 * only guard, so a walk never takes longer than the budget for it.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Most a walk waits in all for files changed too recently to read (ms). */
export const WALK_WAIT_BUDGET_MS = 1_000;

export class WriteWaits {
  #left: number;
  /** How long the walk waited (ms). */
  waitedMs = 0;

  constructor(
    private readonly signal?: AbortSignal,
    budgetMs = WALK_WAIT_BUDGET_MS,
  ) {
    this.#left = budgetMs;
  }

  /** What is left of the budget (ms). */
  get left(): number {
    return this.#left;
  }

  /** Waits `ms`, or what is left of the budget; false (at once) when nothing is left. */
  async wait(ms: number): Promise<boolean> {
    const granted = Math.min(ms, this.#left);
    if (granted <= 0) return false;
    this.#left -= granted;
    this.waitedMs += granted;
    await sleep(granted, undefined, { signal: this.signal });
    return true;
  }
}
