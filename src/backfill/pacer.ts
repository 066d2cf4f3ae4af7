/**
 * The sweep's throttle: hands out start times `1000 / ratePerSec` ms apart. Each call reserves
 * its slot before waiting, so concurrent callers share one rate.
 */
import { delay } from '../runtime/with-timeout.js';

export type Pacer = (signal?: AbortSignal) => Promise<void>;

export function createPacer(ratePerSec: number, now: () => number = Date.now): Pacer {
  const intervalMs = 1_000 / ratePerSec;
  let nextAt = now();
  return async (signal) => {
    const at = Math.max(now(), nextAt);
    nextAt = at + intervalMs;
    const wait = at - now();
    if (wait >= 1) await delay(wait, signal);
  };
}
