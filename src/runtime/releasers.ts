/**
 * LIFO cleanup: resources register a release function as they are acquired; `releaseAll` runs
 * every one in reverse order even if some throw, then rethrows the first error.
 */
export type Releaser = () => Promise<void> | void;

export class Releasers {
  readonly #stack: { name: string; release: Releaser }[] = [];
  #released: Promise<void> | null = null;

  /** Registers a releaser; returns the value for chaining. */
  add<T>(name: string, release: Releaser, value?: T): T {
    this.#stack.push({ name, release });
    return value as T;
  }

  /** Runs all releasers once (idempotent: later calls get the same promise). */
  releaseAll(): Promise<void> {
    this.#released ??= (async () => {
      let first: unknown;
      while (this.#stack.length > 0) {
        const { release } = this.#stack.pop()!;
        try {
          await release();
        } catch (error) {
          first ??= error;
        }
      }
      if (first !== undefined) throw first;
    })();
    return this.#released;
  }
}
