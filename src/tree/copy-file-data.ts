/**
 * Copies an open file into a new one while hashing it, in one read of the source. Sparse
 * sources stay sparse: each all-zero block is skipped (left as a hole) instead of written, and
 * the size is set at the end, like `rsync --sparse` and `cp --sparse=auto`. Reads stop at the
 * size seen before the copy: a file still growing is copied as the prefix it had (its newer
 * mtime makes the next persist copy it again).
 */
import type { ReadAt } from './read-at.js';
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { borrowBuffer, releaseBuffer } from './read-buffers.js';

/** Hole granularity: the usual filesystem block size. */
const BLOCK_BYTES = 4096;
const ZERO_BLOCK = Buffer.alloc(BLOCK_BYTES);

export interface CopiedData {
  /** sha256 hex of the bytes copied. */
  readonly hash: string;
  readonly bytes: number;
  /** The copy stopped early: `unmoved` said the source changed (what was copied is not a version of it). */
  readonly moved?: true;
}

/**
 * Bytes copied between two calls of a copy's `unmoved` check: a source rewritten while it is
 * read is given up after at most this much more (a 50 MB file under a writer costs a few MB per
 * attempt, not the whole file written into the archive and thrown away).
 */
export const UNMOVED_CHECK_BYTES = 4 * 1024 * 1024;

/** True when a file's allocated blocks cover less than its size (it has holes). */
export function isSparse(stats: { size: bigint; blocks: bigint }): boolean {
  return stats.blocks * 512n < stats.size;
}

// Writes all of `chunk[start, end)` at `position` (a regular file may take a write in parts).
async function writeAll(out: FileHandle, chunk: Buffer, start: number, end: number, position: number): Promise<void> {
  while (start < end) {
    const { bytesWritten } = await out.write(chunk, start, end - start, position);
    start += bytesWritten;
    position += bytesWritten;
  }
}

// Writes `chunk` at `position`, skipping all-zero blocks (holes).
async function writeSparse(out: FileHandle, chunk: Buffer, position: number): Promise<void> {
  let start = -1;
  for (let offset = 0; offset < chunk.length; offset += BLOCK_BYTES) {
    const block = chunk.subarray(offset, Math.min(offset + BLOCK_BYTES, chunk.length));
    const zero = block.length === BLOCK_BYTES ? block.equals(ZERO_BLOCK) : block.every((b) => b === 0);
    if (!zero && start < 0) start = offset;
    if (zero && start >= 0) {
      await writeAll(out, chunk, start, offset, position + start);
      start = -1;
    }
  }
  if (start >= 0) await writeAll(out, chunk, start, chunk.length, position + start);
}

/**
 * Copies up to `size` bytes of `source` into the empty `out`; both handles stay open. With
 * `unmoved`, the source is checked every `UNMOVED_CHECK_BYTES` and once at the end: when it
 * answers false the copy stops there (`moved`).
 */
export async function copyFileData(source: ReadAt, out: FileHandle, size: number, sparse: boolean, signal?: AbortSignal, unmoved?: () => Promise<boolean>): Promise<CopiedData> {
  const hash = createHash('sha256');
  const buffer = borrowBuffer();
  let copied = 0;
  let checkAt = UNMOVED_CHECK_BYTES;
  try {
    while (copied < size) {
      signal?.throwIfAborted();
      if (unmoved && copied >= checkAt) {
        if (!(await unmoved())) return { hash: '', bytes: copied, moved: true };
        checkAt = copied + UNMOVED_CHECK_BYTES;
      }
      const { bytesRead } = await source.read(buffer, 0, Math.min(buffer.length, size - copied), copied);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      if (sparse) await writeSparse(out, chunk, copied);
      else await writeAll(out, chunk, 0, bytesRead, copied);
      copied += bytesRead;
    }
    if (sparse) await out.truncate(copied);
    if (unmoved && !(await unmoved())) return { hash: '', bytes: copied, moved: true };
  } finally {
    releaseBuffer(buffer);
  }
  return { hash: hash.digest('hex'), bytes: copied };
}
