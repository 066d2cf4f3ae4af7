/**
 * Streams a revision into a POSIX tar (pax) file, entry by entry, with no temporary tree: a
 * directory, file (mode, mtime, content), symlink (as a symlink), FIFO, and each later name of
 * a multiply-linked inode as a hard link to its first name. Holes of sparse files are written
 * as zeros (a tar has no holes unless it uses GNU sparse headers, which not every reader knows).
 */
import type { FileHandle } from 'node:fs/promises';
import { ExportFailedError } from '../errors/export-failed-error.js';
import { encodePath } from '../archive/tree-walk.js';
import { borrowBuffer, releaseBuffer } from '../tree/read-buffers.js';
import type { RevisionEntry } from './revision-entries.js';
import { TAR_END, tarHeader, tarPadding } from '../archive/tar-header.js';

/** Output is written in chunks of about this size (headers of small files coalesce). */
const FLUSH_BYTES = 1024 * 1024;

export interface ExportCounts {
  entries: number;
  files: number;
  directories: number;
  symlinks: number;
  fifos: number;
  hardLinks: number;
  /** Content bytes of the files. */
  bytes: number;
}

export const emptyCounts = (): ExportCounts => ({ entries: 0, files: 0, directories: 0, symlinks: 0, fifos: 0, hardLinks: 0, bytes: 0 });

// Appends to `out` in large writes.
class BufferedOutput {
  readonly #chunks: Buffer[] = [];
  #pending = 0;
  written = 0;

  constructor(private readonly out: FileHandle) {}

  async push(bytes: Buffer): Promise<void> {
    this.#chunks.push(bytes);
    this.#pending += bytes.length;
    if (this.#pending >= FLUSH_BYTES) await this.flush();
  }

  /** Writes `bytes` now, after what is pending (for content read into a reused buffer: no copy). */
  async writeThrough(bytes: Buffer): Promise<void> {
    await this.flush();
    await this.out.writeFile(bytes);
    this.written += bytes.length;
  }

  async flush(): Promise<void> {
    if (this.#pending === 0) return;
    const data = Buffer.concat(this.#chunks, this.#pending);
    this.#chunks.length = 0;
    this.#pending = 0;
    await this.out.writeFile(data);
    this.written += data.length;
  }
}

export interface WriteTarOptions {
  readonly signal: AbortSignal;
  /** Called after each entry with the counts so far. */
  readonly onEntry?: (counts: Readonly<ExportCounts>) => void;
  /** Names the revision in errors. */
  readonly label: string;
}

// Copies exactly `size` bytes of a file's content into the output.
async function copyContent(entry: RevisionEntry, output: BufferedOutput, options: WriteTarOptions): Promise<void> {
  const input = await entry.open!();
  const buffer = borrowBuffer();
  try {
    let copied = 0;
    while (copied < entry.size) {
      options.signal.throwIfAborted();
      const { bytesRead } = await input.read(buffer, 0, Math.min(buffer.length, entry.size - copied), copied);
      if (bytesRead === 0) {
        throw new ExportFailedError(`${options.label}: ${encodePath(entry.rel)} has ${copied} bytes, its revision records ${entry.size}`, { context: { path: encodePath(entry.rel), size: entry.size, read: copied } });
      }
      const chunk = buffer.subarray(0, bytesRead);
      // Small contents coalesce with their headers; large ones go straight from the read buffer.
      if (bytesRead < FLUSH_BYTES / 8) await output.push(Buffer.from(chunk));
      else await output.writeThrough(chunk);
      copied += bytesRead;
    }
  } finally {
    releaseBuffer(buffer);
    await input.close();
  }
}

/** Writes every entry and the end of the archive to `out` (positioned at its start); returns the counts. */
export async function writeTar(entries: AsyncIterable<RevisionEntry>, out: FileHandle, options: WriteTarOptions): Promise<ExportCounts & { tarBytes: number }> {
  const output = new BufferedOutput(out);
  const counts = emptyCounts();
  for await (const entry of entries) {
    options.signal.throwIfAborted();
    const base = { path: entry.rel, mode: entry.mode, mtimeNs: entry.mtimeNs };
    if (entry.type === 'dir') {
      await output.push(tarHeader({ ...base, type: 'dir', size: 0 }));
      counts.directories += 1;
    } else if (entry.type === 'symlink') {
      await output.push(tarHeader({ ...base, type: 'symlink', size: 0, linkpath: entry.target! }));
      counts.symlinks += 1;
    } else if (entry.type === 'fifo') {
      await output.push(tarHeader({ ...base, type: 'fifo', size: 0 }));
      counts.fifos += 1;
    } else if (entry.linkTo) {
      await output.push(tarHeader({ ...base, type: 'hardlink', size: 0, linkpath: entry.linkTo }));
      counts.hardLinks += 1;
      counts.files += 1;
    } else {
      await output.push(tarHeader({ ...base, type: 'file', size: entry.size }));
      await copyContent(entry, output, options);
      await output.push(tarPadding(entry.size));
      counts.files += 1;
      counts.bytes += entry.size;
    }
    counts.entries += 1;
    options.onEntry?.(counts);
  }
  await output.push(TAR_END);
  await output.flush();
  return { ...counts, tarBytes: output.written };
}
