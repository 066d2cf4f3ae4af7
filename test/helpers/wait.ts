// Event- and state-based waiting: never assert on wall-clock time, only on states reached.

/** Polls `check` until it returns a non-undefined value or the cap passes (then throws naming `what`). */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000, pollMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Calls `fn` once it has been invoked `n` times (BullMQ's `after`). */
export function after(n: number, fn: () => void): () => void {
  let count = 0;
  return () => {
    count += 1;
    if (count === n) fn();
  };
}
