/**
 * Runs `fn` over `items` with at most `limit` calls in flight; results keep the input order.
 *
 * It fails as a whole: after the first failure (or once `signal` is aborted) no further item
 * starts, and the promise rejects with that failure (or the abort reason) only once every call in
 * flight has ended, so nothing the caller started is still at work (writing into a tree, using a
 * handle) when the caller sees the error.
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>, signal?: AbortSignal): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failure: { readonly error: unknown } | undefined;
  const lane = async () => {
    while (next < items.length && failure === undefined) {
      if (signal?.aborted) {
        failure = { error: signal.reason };
        return;
      }
      const i = next++;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure) throw failure.error;
  return out;
}
