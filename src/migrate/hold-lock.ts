/**
 * A workspace lock held by a migration: the same single-flight locks persist (`persist:{ws}`),
 * rollback (`persist:{ws}`), provisioning and backfill (`provision:{ws}`) hold, so a migration
 * never flips `current` or removes a format 1 revision under one of them. A lock held elsewhere
 * is waited for (each acquisition already retries for a few seconds) until `waitMs` has passed.
 */
import { LockUnavailableError } from '../locks/lock-errors.js';
import type { SingleFlight } from '../locks/single-flight.js';

export interface LockDeps {
  readonly locks: Pick<SingleFlight, 'using'>;
  /** Longest hold of one lock (its routine's signal aborts then). */
  readonly lockHoldMs: number;
  /** How long to keep trying for a lock that is held elsewhere. */
  readonly lockWaitMs: number;
}

/** Runs `routine` holding `resource`; `onWait` is told once when the lock is held elsewhere. */
export async function holdLock<T>(deps: LockDeps, resource: string, routine: (signal: AbortSignal) => Promise<T>, onWait?: (resource: string) => void, now: () => number = Date.now): Promise<T> {
  const deadline = now() + deps.lockWaitMs;
  let told = false;
  for (;;) {
    let acquired = false;
    try {
      return await deps.locks.using(resource, { maxHoldMs: deps.lockHoldMs }, (lock) => {
        acquired = true;
        return routine(lock.signal);
      });
    } catch (error) {
      // Only a failed acquisition is waited out; anything the routine threw is its own.
      if (acquired || !(error instanceof LockUnavailableError) || now() >= deadline) throw error;
      if (!told) onWait?.(resource);
      told = true;
    }
  }
}
