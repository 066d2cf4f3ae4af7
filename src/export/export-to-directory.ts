/**
 * `fleet export --to DIR`: a revision as a plain tree. Format 2 is extracted from its objects the
 * way a local restore makes it (`extractRevision`: through the host's tar, large files copied
 * after it, reflinks where the filesystem has them, holes kept, never links into the store; made
 * file by file when tar fails, which the result's `tarFailure` says);
 * format 1 is copied from its revision directory by handles (`buildRevisionTree` with no basis:
 * every file copied, nothing followed, hard links, FIFOs, modes and mtimes kept). Both are built
 * in a private temporary beside the target and renamed into place when complete.
 */
import { mkdir, rename } from 'node:fs/promises';
import { buildRevisionTree } from '../archive/build-revision-tree.js';
import type { ArchiveStore } from '../archive/archive-store.js';
import { extractRevision } from '../archive/extract-revision.js';
import { classifyStorageError } from '../errors/classify-storage-error.js';
import { ExportFailedError } from '../errors/export-failed-error.js';
import { DirHandle } from '../tree/dir-handle.js';
import { removeTree } from '../tree/remove-tree.js';
import { UNLIMITED_TREE } from '../tree/tree-limits.js';
import { checkExportTarget, exportTemp } from './export-target.js';
import type { ExportSource } from './export-source.js';

export interface ExportOptions {
  /** PATH for `mkfifo`. */
  readonly systemPath: string;
  readonly signal: AbortSignal;
  /** Deadline of the host's tar that writes a format 2 revision. */
  readonly timeoutMs: number;
  /** Progress: entries (format 1) or files (format 2) done, of `total`. */
  readonly onProgress?: (done: number, total: number) => void;
}

export interface DirectoryExport {
  readonly files: number;
  readonly bytes: number;
  /** How the tree was made: format 2 through the host's tar, or file by file; format 1 copied. */
  readonly via: 'tar' | 'materialize' | 'copy';
  /** Why the host's tar failed, when a format 2 revision was made file by file instead. */
  readonly tarFailure?: string;
}

// Format 2: the record's trees into the fresh directory `tmp`.
async function extractInto(archive: ArchiveStore, source: ExportSource & { format: 2 }, tmp: string, options: ExportOptions): Promise<DirectoryExport> {
  await mkdir(tmp, { mode: 0o700 });
  const dest = await DirHandle.open(tmp);
  try {
    const made = await extractRevision(archive.objects, source.root, dest, {
      systemPath: options.systemPath,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      onFile: (files) => options.onProgress?.(files, source.files),
    });
    return { files: made.files, bytes: made.bytes, via: made.via, ...(made.tarFailure !== undefined ? { tarFailure: made.tarFailure } : {}) };
  } finally {
    await dest.close();
  }
}

// Format 1: the revision directory copied by handles into `tmp` (which it creates).
async function copyInto(source: ExportSource & { format: 1 }, tmp: string, options: ExportOptions): Promise<DirectoryExport> {
  const built = await buildRevisionTree({
    source: source.dir,
    dest: tmp,
    basis: null,
    keepMissing: false,
    limits: UNLIMITED_TREE,
    systemPath: options.systemPath,
    signal: options.signal,
    onProgress: (walked) => options.onProgress?.(walked, source.entries),
  });
  // A revision is immutable: anything it did not copy means the archive cannot be read whole.
  if (built.refusedCount > 0 || built.vanished > 0 || built.rootChanged) {
    const first = built.refused[0]?.message;
    throw new ExportFailedError(`${source.workspaceId}/${source.revision}: ${built.refusedCount} entries could not be read, ${built.vanished} vanished${first ? ` (${first})` : ''}`, {
      context: { workspaceId: source.workspaceId, revision: source.revision, refused: built.refusedCount, vanished: built.vanished },
    });
  }
  return { files: built.files, bytes: built.bytes, via: 'copy' };
}

/** Writes `source` as a plain tree at `target` (absent or an empty directory). */
export async function exportToDirectory(archive: ArchiveStore, source: ExportSource, target: string, options: ExportOptions): Promise<DirectoryExport> {
  await checkExportTarget(target, 'dir');
  const tmp = exportTemp(target);
  try {
    const made = source.format === 2 ? await extractInto(archive, source, tmp, options) : await copyInto(source, tmp, options);
    // rename(2) replaces an empty directory and fails on a non-empty one: nothing written meanwhile is lost.
    await rename(tmp, target).catch((error: unknown) => Promise.reject(classifyStorageError(error, 'export rename', target)));
    return made;
  } catch (error) {
    await removeTree(tmp).catch(() => undefined);
    throw error;
  }
}
