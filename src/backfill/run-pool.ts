/**
 * Runs `task` over items with at most `concurrency` in flight. The first failure stops new
 * tasks from starting; every started task is awaited before that failure is rethrown, so no
 * promise outlives the call.
 */
export async function runPool<T>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<void>, signal?: AbortSignal): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (failure === null && next < items.length) {
      if (signal?.aborted) {
        failure ??= { error: signal.reason };
        return;
      }
      const index = next++;
      try {
        await task(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  if (failure) throw (failure as { error: unknown }).error;
}
