/**
 * Fills a new temporary revision directory from a source tree (a live tree for persist, a
 * committed revision for rollback and backfill) and returns its manifest entries, in one walk by
 * directory handles (`RevisionBuilder`):
 *
 * - an unchanged file (size, stored mode and nanosecond mtime equal to the basis revision's
 *   entry: rsync's quick check) is hard-linked from the basis; anything else is copied and hashed
 *   in the same read (sparse files keep their holes); setuid/setgid bits are dropped;
 * - symlinks are copied verbatim and never followed; FIFOs are recreated (or linked when
 *   unchanged); sockets and device nodes are skipped and counted;
 * - names of one inode within the tree stay hard links of one inode;
 * - with `keepMissing` (upload-only), entries of the basis the source lacks are kept; an entry
 *   refused by a limit (too deep, path too long, too many entries, too large, unreadable) keeps
 *   its basis state in every mode, and the rest of the tree is archived;
 * - the source's root must be a real directory; `rootChanged` says it was removed or replaced
 *   while it was read (the caller refuses to commit such a tree).
 *
 * Why no rsync here: rsync resolves source paths by string, so a directory an agent swaps for a
 * symlink mid-run can make it read outside the tree, and it cannot address paths past PATH_MAX;
 * a `link(2)` per unchanged file also costs a fraction of rsync's per-file basis lookups.
 */
import { mkdir } from 'node:fs/promises';
import type { RevisionManifest, ScanResult } from './manifest.js';
import { classifyStorageError } from '../errors/classify-storage-error.js';
import type { TreeLimitError } from '../errors/tree-limit-error.js';
import { DirHandle, stillAt } from '../tree/dir-handle.js';
import type { TreeLimits } from '../tree/tree-limits.js';
import { indexManifest } from './prior-index.js';
import { RevisionBuilder } from './revision-builder.js';

export interface RevisionBasis {
  /** A committed revision directory. */
  readonly root: string;
  readonly manifest: RevisionManifest;
}

export interface BuildRevisionTreeOptions {
  /** Root of the source tree (its parents are the fleet's; it must be a real directory). */
  readonly source: string;
  /** The temporary revision directory to create (must not exist). */
  readonly dest: string;
  readonly basis: RevisionBasis | null;
  /** Keep basis entries the source lacks (upload-only persist). */
  readonly keepMissing: boolean;
  readonly limits: TreeLimits;
  /** PATH for `mkfifo`. */
  readonly systemPath: string;
  readonly signal: AbortSignal;
  /** Source entries walked so far (every few thousand). */
  readonly onProgress?: (walked: number) => void;
}

export interface BuiltTree extends ScanResult {
  /** Source files hard-linked from the basis. */
  readonly linkedFiles: number;
  /** Basis entries kept for paths the source lacks or that were refused. */
  readonly keptEntries: number;
  /** Source entries listed but gone (or no longer what they were) when read. */
  readonly vanished: number;
  /** Source entries walked. */
  readonly walked: number;
  /** Entries refused by a limit (the first 100 in full). */
  readonly refused: readonly TreeLimitError[];
  readonly refusedCount: number;
  readonly skipped: { readonly devices: number; readonly sockets: number };
  /** Names linked to an earlier name of the same inode in the new tree. */
  readonly hardLinks: number;
  /** Entries whose setuid/setgid bits were dropped. */
  readonly strippedModes: number;
  /** The source root was removed or replaced while it was read. */
  readonly rootChanged: boolean;
  /** True while the source root is still the directory that was read (checked again before a commit). */
  readonly rootIntact: () => Promise<boolean>;
}



// Opens a directory the fleet named, with a typed error.
async function openRoot(dir: string, role: string): Promise<DirHandle> {
  try {
    return await DirHandle.open(dir);
  } catch (error) {
    throw classifyStorageError(error, `open ${role}`, dir);
  }
}

export async function buildRevisionTree(options: BuildRevisionTreeOptions): Promise<BuiltTree> {
  const { source, dest, basis, signal } = options;
  const src = await openRoot(source, 'source tree');
  let dst: DirHandle | null = null;
  let basisRoot: DirHandle | null = null;
  try {
    await mkdir(dest, { mode: 0o700 }).catch((error: unknown) => Promise.reject(classifyStorageError(error, 'create revision', dest)));
    dst = await openRoot(dest, 'revision');
    basisRoot = basis ? await openRoot(basis.root, 'basis revision') : null;
    const builder = new RevisionBuilder({
      index: indexManifest(basis?.manifest ?? null),
      keepMissing: options.keepMissing,
      limits: options.limits,
      systemPath: options.systemPath,
      signal,
      destRoot: dst,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    await builder.build(src, dst, basisRoot);
    const rootChanged = !(await stillAt(source, src)) || (await src.stat()).nlink === 0n;
    const entries = builder.entries();
    let files = 0;
    let bytes = 0;
    for (const e of entries) {
      if (e.t !== 'f') continue;
      files += 1;
      bytes += e.s ?? 0;
    }
    return {
      entries,
      files,
      bytes,
      copiedFiles: builder.copiedFiles,
      linkedFiles: builder.linkedFiles,
      keptEntries: builder.keptEntries,
      vanished: builder.tally.vanished,
      walked: builder.tally.walked,
      refused: builder.tally.refused,
      refusedCount: builder.tally.refusedCount,
      skipped: { ...builder.tally.skipped },
      hardLinks: builder.tally.hardLinks,
      strippedModes: builder.tally.strippedModes,
      rootChanged,
      rootIntact: () => stillAt(source, src),
    };
  } finally {
    await basisRoot?.close();
    await dst?.close();
    await src.close();
  }
}
