/**
 * The sweep's throttle: hands out start times `1000 / ratePerSec` ms apart. Each call reserves
 * its slot before waiting, so concurrent callers share one rate; idle time is not saved up.
 */
import { delay } from '../lib/with-timeout.js';

export interface Pacer {
  /** Reserves the next start slot and returns how long to wait for it (ms). */
  reserve(): number;
  /** Waits for the next start slot. */
  wait(signal?: AbortSignal): Promise<void>;
}

export function createPacer(ratePerSec: number, now: () => number = Date.now): Pacer {
  const intervalMs = 1_000 / ratePerSec;
  let nextAt = -Infinity;
  const reserve = () => {
    const at = Math.max(now(), nextAt);
    nextAt = at + intervalMs;
    return at - now();
  };
  return {
    reserve,
    async wait(signal) {
      const ms = reserve();
      if (ms >= 1) await delay(ms, signal);
    },
  };
}
