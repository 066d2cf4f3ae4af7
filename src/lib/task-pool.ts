/**
 * A bounded pool of background tasks that fails as a whole: the first task error is kept and
 * rethrown by the next `schedule`/`check`/`drain`, so a walk that feeds the pool stops at the
 * next step instead of piling up work after a failure. Tasks are also tracked per group (a
 * directory of a tree walk), so a caller can wait for exactly its own tasks before it closes
 * what they use.
 */
export class TaskPool {
  readonly #running = new Set<Promise<void>>();
  #failure: { error: unknown } | undefined;

  constructor(
    private readonly limit: number,
    private readonly signal?: AbortSignal,
  ) {}

  /** Whether any task is running. */
  get busy(): boolean {
    return this.#running.size > 0;
  }

  /** Throws the first task failure, or the abort reason. */
  check(): void {
    this.signal?.throwIfAborted();
    if (this.#failure) throw this.#failure.error;
  }

  /** Starts `work` once a slot is free; its promise joins `group` (it never rejects). */
  async schedule(group: Promise<void>[], work: () => Promise<void>): Promise<void> {
    while (this.#running.size >= this.limit) await Promise.race(this.#running);
    this.check();
    const task: Promise<void> = work()
      .catch((error: unknown) => {
        this.#failure ??= { error };
      })
      .finally(() => this.#running.delete(task));
    this.#running.add(task);
    group.push(task);
  }

  /** Waits for every task, then throws the first failure. */
  async drain(): Promise<void> {
    await Promise.all(this.#running);
    this.check();
  }

  /** Waits for every task, failed or not (cleanup after an error). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.#running);
  }
}
