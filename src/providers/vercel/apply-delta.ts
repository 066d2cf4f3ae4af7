/**
 * Writes the files of a delta archive (made in the sandbox, so untrusted) into the mirror.
 *
 * - Which entries may be taken is delta-entries.ts (extract rules, asked for, once, the second
 *   look agrees); a file that may not is left as the mirror had it, and the next persist takes
 *   it again.
 * - Content is written to a new file in the staging directory (`O_EXCL | O_NOFOLLOW`), given the
 *   listed mode and mtime, and renamed over the mirror's entry beneath its parent's handle; every
 *   parent is opened by `DirCursor` (no symlink on the way is ever followed).
 */
import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { errnoOf } from '../../errors/classify-storage-error.js';
import { CREATE_FILE_FLAGS, type DirHandle } from '../../tree/dir-handle.js';
import type { DirCursor } from '../../tree/dir-cursor.js';
import { setFileTime } from '../../tree/file-times.js';
import { removeEntry } from '../../tree/remove-tree.js';
import { fileMode } from './mirror-modes.js';
import type { ListedEntry } from './parse-listing.js';
import { wantedEntries, type DeltaCounts } from './delta-entries.js';
import { splitRelative } from './safe-relative.js';

export interface ApplyDeltaOptions {
  /** The uncompressed archive. */
  readonly source: AsyncIterable<Buffer>;
  readonly cursor: DirCursor;
  /** Where new files are written before they are renamed into the mirror (same filesystem). */
  readonly staging: DirHandle;
  /** The files asked for, by key (their listing). */
  readonly wanted: ReadonlyMap<string, ListedEntry>;
  /** The sandbox's second look at them, by key. */
  readonly restat: ReadonlyMap<string, ListedEntry>;
  readonly signal: AbortSignal;
}

/** A mirror copy written by the delta: its inode and ctime. */
export interface WrittenCopy {
  readonly ino: bigint;
  readonly ctimeNs: bigint;
}

export interface DeltaOutcome {
  readonly written: ReadonlyMap<string, WrittenCopy>;
  /** Archive entries that were not asked for (or not regular files, or repeated). */
  readonly unexpected: number;
  /** Files that changed between the listing and the second look (taken by the next persist). */
  readonly unstable: number;
}

export async function applyDelta(options: ApplyDeltaOptions): Promise<DeltaOutcome> {
  const written = new Map<string, WrittenCopy>();
  const tag = randomBytes(4).toString('hex');
  const counts: DeltaCounts = { unexpected: 0, unstable: 0 };
  for await (const { key, rel, want, content } of wantedEntries(options.source, options.wanted, options.restat, counts, options.signal)) {
    const temp = Buffer.from(`delta-${tag}-${written.size}`);
    await writeStaged(options.staging, temp, content, want);
    const { parent, name } = splitRelative(rel);
    const dir = await options.cursor.at(parent);
    await placeStaged(options.staging, temp, dir, name);
    const stats = await dir.lstat(name);
    written.set(key, { ino: stats.ino, ctimeNs: stats.ctimeNs });
  }
  return { written, ...counts };
}

// Writes one file's content into the staging directory with its listed mode and mtime.
async function writeStaged(staging: DirHandle, temp: Buffer, content: AsyncIterable<Buffer>, want: ListedEntry): Promise<void> {
  let handle: FileHandle | null = await staging.openFile(temp, CREATE_FILE_FLAGS, 0o600);
  try {
    for await (const chunk of content) await handle.write(chunk);
    await handle.chmod(fileMode(want.mode));
    await setFileTime(handle, want.mtimeNs);
    await handle.close();
    handle = null;
  } catch (error) {
    await handle?.close();
    await staging.unlink(temp).catch(() => undefined);
    throw error;
  }
}

/** Renames the staged file over the mirror's entry (a directory in the way is removed first). */
export async function placeStaged(staging: DirHandle, temp: Buffer, dir: DirHandle, name: Buffer): Promise<void> {
  try {
    await staging.rename(temp, dir, name);
  } catch (error) {
    const code = errnoOf(error);
    if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    await removeEntry(dir, name);
    await staging.rename(temp, dir, name);
  }
}
