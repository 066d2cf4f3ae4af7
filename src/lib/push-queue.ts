/**
 * A queue that producers push into and one consumer reads as an async iterable (a stream of
 * events whose producer is callbacks: exec output, Redis stream entries). `end()` finishes the
 * iteration after what is queued; the consumer's `return()` (a `for await` left early, a
 * response stream cancelled) calls `onCancel` once and drops what is queued.
 */
export class PushQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #waiter: ((result: IteratorResult<T>) => void) | null = null;
  #ended = false;
  #cancelled = false;

  constructor(private readonly onCancel: () => void = () => undefined) {}

  /** Items queued and not yet read. */
  get length(): number {
    return this.#items.length;
  }

  /** Whether the consumer went away (pushes are dropped). */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  push(item: T): void {
    if (this.#ended || this.#cancelled) return;
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = null;
      waiter({ value: item, done: false });
    } else this.#items.push(item);
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#items.length === 0 && this.#waiter) {
      const waiter = this.#waiter;
      this.#waiter = null;
      waiter({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift()!, done: false });
        if (this.#ended || this.#cancelled) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.#waiter = resolve));
      },
      return: () => {
        if (!this.#cancelled && !this.#ended) {
          this.#cancelled = true;
          this.onCancel();
        }
        this.#items.length = 0;
        const waiter = this.#waiter;
        this.#waiter = null;
        waiter?.({ value: undefined, done: true });
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
