/**
 * Fills a fresh temporary revision directory with a copy of a tree (a live tree for persist, a
 * committed revision for rollback and backfill). With a basis revision, unchanged files are
 * hard-linked from it in the worker (`linkUnchanged`) and rsync copies only the listed rest;
 * without one (a first revision), rsync copies everything. rsync runs detached with a deadline
 * (`runRsync`); its exit code decides, nothing here is committed.
 */
import type { RevisionManifest } from '../archive/manifest.js';
import { listedArgs, snapshotArgs } from '../rsync/rsync-args.js';
import { runRsync, type RsyncRun } from '../rsync/run-rsync.js';
import { linkUnchanged } from './link-unchanged.js';

export interface BuildRevisionTreeOptions {
  readonly source: string;
  /** An empty directory (the temporary revision). */
  readonly dest: string;
  /** A committed revision whose unchanged files are hard-linked instead of copied. */
  readonly basis: { readonly root: string; readonly manifest: RevisionManifest } | null;
  readonly operation: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly systemPath: string;
  /** rsync exit codes that still count as success (24 for an upload-only persist). */
  readonly acceptExitCodes?: readonly number[];
  /** Entries walked so far while linking (every few thousand). */
  readonly onLinkProgress?: (entries: number) => void;
  /** Called when the copy step starts (after linking). */
  readonly onCopy?: () => Promise<void>;
}

export interface RevisionTree {
  readonly rsync: RsyncRun;
  /** Encoded paths hard-linked from the basis (present in `dest` for certain). */
  readonly linkedPaths: ReadonlySet<string>;
}

/** rsync's I/O stall timeout (an idle transfer fails with exit 30 instead of hanging). */
const IO_TIMEOUT_S = 60;

export async function buildRevisionTree(options: BuildRevisionTreeOptions): Promise<RevisionTree> {
  const { source, dest, basis, signal } = options;
  const farm = basis ? await linkUnchanged(source, basis.root, basis.manifest, dest, signal, options.onLinkProgress) : null;
  await options.onCopy?.();
  const rsync = await runRsync({
    args: farm ? listedArgs({ source, dest, ioTimeoutS: IO_TIMEOUT_S }) : snapshotArgs({ source, dest, ioTimeoutS: IO_TIMEOUT_S }),
    ...(farm ? { input: farm.list } : {}),
    operation: options.operation,
    timeoutMs: options.timeoutMs,
    signal,
    path: options.systemPath,
    ...(options.acceptExitCodes ? { acceptExitCodes: options.acceptExitCodes } : {}),
  });
  return { rsync, linkedPaths: farm?.linkedPaths ?? new Set() };
}
