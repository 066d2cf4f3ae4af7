/**
 * sha256 of the first `size` bytes of an open file (`Infinity`: up to its end), read by position
 * through a borrowed buffer: hashing a 130 MB revision allocates no per-chunk Buffers, and the
 * handle and its file position are left as they were. Used by format 1 manifests, verify, and
 * the second read of a file that may still be being written.
 */
import type { ReadAt } from './read-at.js';
import { createHash } from 'node:crypto';
import { borrowBuffer, releaseBuffer } from './read-buffers.js';

/** The digest (hex) and the bytes actually read (fewer when the file shrank). */
export async function hashFileData(source: ReadAt, size: number, signal?: AbortSignal): Promise<{ readonly hash: string; readonly bytes: number }> {
  const hash = createHash('sha256');
  const buffer = borrowBuffer();
  let read = 0;
  try {
    while (read < size) {
      signal?.throwIfAborted();
      const { bytesRead } = await source.read(buffer, 0, Math.min(buffer.length, size - read), read);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      read += bytesRead;
    }
  } finally {
    releaseBuffer(buffer);
  }
  return { hash: hash.digest('hex'), bytes: read };
}
