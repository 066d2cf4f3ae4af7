/**
 * A small pool of read buffers for hashing and copying: a 130 MB revision is read through a few
 * reused buffers, so the worker allocates no per-chunk Buffers (a stream would, and its RSS
 * would grow with them until a GC).
 */

/** Size of one read. */
export const READ_BUFFER_BYTES = 256 * 1024;
/** Idle buffers kept for reuse: the copy lanes plus the hashing lanes, fewer than a leak. */
const IDLE_BUFFERS = 24;
const idle: Buffer[] = [];

/** Borrows a buffer of `READ_BUFFER_BYTES` (give it back with `releaseBuffer`). */
export function borrowBuffer(): Buffer {
  return idle.pop() ?? Buffer.allocUnsafeSlow(READ_BUFFER_BYTES);
}

/** Returns a borrowed buffer. */
export function releaseBuffer(buffer: Buffer): void {
  if (idle.length < IDLE_BUFFERS) idle.push(buffer);
}
