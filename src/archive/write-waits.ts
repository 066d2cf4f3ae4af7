/**
 * The time one persist walk may spend waiting for writes that may still be under way (see
 * store-open-file.ts `WRITE_STALL_NS`). A turn's last writes cost one wait of at most that long:
 * once the walk has waited, what was written before is old enough. A tree whose files are
 * rewritten without pause (a sandbox touching thousands of files in a loop) would make every
 * file wait: past the budget files are read at once, with the double read of a young file as the
 * only guard, so a walk never waits longer than the budget in all.
 *
 * The budget is wall time: waits that overlap (files streamed at once, each waiting for itself)
 * cost the time they cover together, not each its own.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Most a walk waits in all for files changed too recently to read (ms of wall time). */
export const WALK_WAIT_BUDGET_MS = 1_000;

export class WriteWaits {
  /** Wall time covered by waits so far (ms). */
  #spent = 0;
  /** When the latest granted wait ends (ms, on `now`'s clock). */
  #coveredUntil = -Infinity;

  constructor(
    private readonly signal?: AbortSignal,
    private readonly budgetMs = WALK_WAIT_BUDGET_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** How long the walk waited (ms of wall time). */
  get waitedMs(): number {
    return Math.round(this.#spent);
  }

  /** What is left of the budget (ms). */
  get left(): number {
    return this.budgetMs - this.#spent;
  }

  /** Waits `ms`, or as much of it as the budget leaves; false (at once) when it leaves nothing. */
  async wait(ms: number): Promise<boolean> {
    const start = this.now();
    // The part of [start, start + ms] no earlier wait covers is what this one costs.
    const from = Math.max(start, this.#coveredUntil);
    const end = Math.min(start + ms, from + this.left);
    if (ms <= 0 || end <= start) return false;
    this.#spent += Math.max(0, end - from);
    this.#coveredUntil = Math.max(this.#coveredUntil, end);
    // No abort listener per wait (sixteen streamed files wait at once, on one signal): a wait is
    // at most WRITE_STALL_NS long, and an aborted walk stops at its end.
    this.signal?.throwIfAborted();
    await sleep(end - start);
    this.signal?.throwIfAborted();
    return true;
  }
}
