/**
 * Opening legacy and archive files without ever following a symlink: `O_NOFOLLOW` refuses a
 * symlink as the last component, `O_NONBLOCK` keeps a FIFO from blocking the open, and the
 * opened descriptor must be a regular file. Callers check the parent components themselves.
 */
import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

// Errors that mean "there is no regular file here (that we would follow)".
const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENXIO', 'EISDIR', 'ENAMETOOLONG']);

export interface OpenedFile {
  readonly handle: FileHandle;
  /** fstat of the opened descriptor. */
  readonly stats: Stats;
}

/** Opens a regular file for reading, or returns null when there is none (or it is a symlink). */
export async function openRegularFile(file: string | Buffer): Promise<OpenedFile | null> {
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (ABSENT.has((error as NodeJS.ErrnoException).code ?? '')) return null;
    throw error;
  }
  const stats = await handle.stat().catch(async (error: unknown) => {
    await handle.close();
    throw error;
  });
  if (!stats.isFile()) {
    await handle.close();
    return null;
  }
  return { handle, stats };
}

/** Reads the `stats.size` bytes an opened file had when opened (fewer if it shrank meanwhile). */
export async function readOpened({ handle, stats }: OpenedFile): Promise<Buffer> {
  const content = Buffer.allocUnsafe(stats.size);
  let offset = 0;
  while (offset < stats.size) {
    const { bytesRead } = await handle.read(content, offset, stats.size - offset, offset);
    if (bytesRead === 0) break;
    offset += bytesRead;
  }
  return offset === stats.size ? content : content.subarray(0, offset);
}

/** A regular file's bytes, or null when there is none (nothing followed). */
export async function readRegularFile(file: string | Buffer): Promise<Buffer | null> {
  const opened = await openRegularFile(file);
  if (!opened) return null;
  try {
    return await readOpened(opened);
  } finally {
    await opened.handle.close();
  }
}

/** sha256 hex of a stream's bytes. */
export async function sha256Of(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
