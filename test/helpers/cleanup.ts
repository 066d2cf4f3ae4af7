// Cleanups registered by helpers during a test; run (LIFO) by the leak guard before it checks.
type Cleanup = () => Promise<unknown> | unknown;
const cleanups: Cleanup[] = [];

export function addCleanup(fn: Cleanup): void {
  cleanups.push(fn);
}

export async function runCleanups(): Promise<void> {
  while (cleanups.length > 0) {
    const fn = cleanups.pop()!;
    try {
      await fn();
    } catch {
      // cleanup is best effort; the leak guard reports what stays open
    }
  }
}
