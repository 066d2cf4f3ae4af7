/**
 * Flushes the archive's filesystem in the background while a walk is still storing: each time
 * the walk has stored another `everyBytes`, one `syncfs` starts (never two at once). The
 * commit's own `syncfs` still covers everything; it finds little left to write, because the
 * disk wrote while the walk's thread read and hashed (the kernel on its own starts writing back
 * only after 30 s or a tenth of memory dirty). Measured on a first persist of 100,000 files:
 * the commit's flush went from 1.1 s to 0.2 s, the walk lost 0.5 s to the writeback beside
 * it (BENCHMARKS.md). A persist that stores less than `everyBytes` starts none.
 *
 * A background flush's failure is not reported here: the commit's flush fails the same way
 * and fails the persist, as before. `settle` waits for one under way (the caller's before its
 * commit, so no flush outlives the run; an aborted run's flush is stopped by the signal it got).
 */
export class FlushAhead {
  #sinceFlush = 0;
  #flushing: Promise<void> | null = null;
  /** Background flushes started (for the persist's report). */
  started = 0;

  constructor(
    private readonly flush: () => Promise<void>,
    private readonly everyBytes: number,
  ) {}

  /** `bytes` more were stored. */
  add(bytes: number): void {
    this.#sinceFlush += bytes;
    if (this.#flushing || this.#sinceFlush < this.everyBytes) return;
    this.#sinceFlush = 0;
    this.started += 1;
    this.#flushing = this.flush()
      .catch(() => undefined)
      .finally(() => {
        this.#flushing = null;
      });
  }

  async settle(): Promise<void> {
    await this.#flushing;
  }
}
