/**
 * The one way the fleet stops a process it started: SIGTERM (a chance to clean up: rsync removes
 * its temporary files, redis-server flushes its AOF), then SIGKILL if it is still there after a
 * grace, like execa's `forceKillAfterDelay`. Used by runCommand for every bounded command and by
 * long-lived-process.ts for the children that outlive a call.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { processAlive } from './process-alive.js';

/**
 * How long a process gets between SIGTERM and SIGKILL: long enough for a clean exit, short next
 * to any deadline that triggers it (execa's `forceKillAfterDelay` default).
 */
export const DEFAULT_KILL_GRACE_MS = 5_000;

/** Poll interval of a process this one did not start (no exit event to wait on). */
const ALIVE_POLL_MS = 50;

/** Sends `signal` to `pid` (negative: its whole process group); one already gone is not an error. */
export function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

export interface TerminateOptions {
  /** Time between SIGTERM and SIGKILL. */
  readonly graceMs: number;
  /**
   * Settles when the process has exited (a child's exit); absent for a process this one did not
   * start, which is polled instead.
   */
  readonly exited?: Promise<unknown>;
}

/**
 * SIGTERMs `pid`, then SIGKILLs it if it has not exited within the grace. Resolves `'exited'`
 * when it went within the grace, `'killed'` once SIGKILL was sent (without waiting for the exit).
 */
export async function terminateProcess(pid: number, { graceMs, exited }: TerminateOptions): Promise<'exited' | 'killed'> {
  signalProcess(pid, 'SIGTERM');
  const gone = exited ? await exitedWithin(exited, graceMs) : await goneWithin(pid, graceMs);
  if (gone) return 'exited';
  signalProcess(pid, 'SIGKILL');
  return 'killed';
}

// True when `exited` settles within `ms`.
async function exitedWithin(exited: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([exited.then(() => true, () => true), graceOver]);
  } finally {
    clearTimeout(timer); // the timer must not outlive an early exit
  }
}

// True when no process `pid` is left within `ms` (polled).
async function goneWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (processAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await delay(ALIVE_POLL_MS);
  }
  return true;
}
