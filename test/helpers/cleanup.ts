// Cleanups registered by helpers during a test; run (LIFO) by the leak guard before it checks.
type Cleanup = () => Promise<unknown> | unknown;
const cleanups: Cleanup[] = [];

export function addCleanup(fn: Cleanup): void {
  cleanups.push(fn);
}

/** Longest one cleanup may take before the next runs (a BullMQ close can hang: bullmq#4656). */
const CLEANUP_MS = 15_000;

export async function runCleanups(): Promise<void> {
  while (cleanups.length > 0) {
    const fn = cleanups.pop()!;
    let timer: NodeJS.Timeout | undefined;
    const overran = new Promise<'overran'>((resolve) => {
      timer = setTimeout(() => resolve('overran'), CLEANUP_MS);
    });
    try {
      const done = await Promise.race([Promise.resolve().then(fn), overran]);
      // Said, not thrown: the hung step is named; the leak guard reports what stays open.
      if (done === 'overran') process.stderr.write(`cleanup still running after ${CLEANUP_MS} ms, left behind: ${fn.toString().replace(/\s+/g, ' ').slice(0, 200)}\n`);
    } catch {
      // cleanup is best effort; the leak guard reports what stays open
    } finally {
      clearTimeout(timer);
    }
  }
}
