/**
 * Runs competing variants side by side: every repeat runs each variant once, and the order
 * rotates between repeats, so drift on a shared machine (other jobs, page cache, thermal) hits
 * every variant alike instead of whichever ran last.
 */
export type Variant<T> = (repeat: number) => Promise<T>;

/** Samples of each variant, index-aligned by repeat. */
export async function interleave<K extends string, T>(
  repeats: number,
  variants: Readonly<Record<K, Variant<T>>>,
  onSample?: (variant: K, repeat: number, value: T) => void,
  /** Rotation offset (when a caller runs one repeat at a time). */
  offset = 0,
): Promise<Record<K, T[]>> {
  const names = Object.keys(variants) as K[];
  const out = Object.fromEntries(names.map((name) => [name, [] as T[]])) as Record<K, T[]>;
  for (let repeat = 0; repeat < repeats; repeat++) {
    const order = names.map((_, i) => names[(i + repeat + offset) % names.length]!);
    for (const name of order) {
      const value = await variants[name](repeat);
      out[name][repeat] = value;
      onSample?.(name, repeat, value);
    }
  }
  return out;
}

/** Milliseconds taken by `fn`. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}
