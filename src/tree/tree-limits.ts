/**
 * Limits on what one persist takes from a live tree. A tree written by an agent can be deeper,
 * longer-named, larger or more numerous than anything a restore or a person could use; entries
 * over a limit are refused one by one (`TreeLimitError`) and the rest of the tree is archived.
 */

export interface TreeLimits {
  /** Deepest directory level walked (the root's children are level 1). @default 1024 */
  readonly maxDepth: number;
  /**
   * Longest relative path in bytes. Fixed below PATH_MAX (4096) with room for the
   * `/proc/self/fd/<n>/` prefix and a restore destination, so every archived path can be opened
   * and restored by ordinary tools. @default 4000
   */
  readonly maxPathBytes: number;
  /** Most entries taken from one live tree. @default 1000000 */
  readonly maxEntries: number;
  /** Largest regular file copied (apparent size: a sparse file's holes are read too). @default 16 GiB */
  readonly maxFileBytes: number;
  /** Most new FIFOs created by one persist (each costs a `mkfifo` process). @default 256 */
  readonly maxNewFifos: number;
}

export const DEFAULT_TREE_LIMITS: TreeLimits = Object.freeze({
  maxDepth: 1024,
  maxPathBytes: 4000,
  maxEntries: 1_000_000,
  maxFileBytes: 16 * 1024 ** 3,
  maxNewFifos: 256,
});

/** No limits (for trees the fleet wrote itself: committed revisions). */
export const UNLIMITED_TREE: TreeLimits = Object.freeze({
  maxDepth: Number.MAX_SAFE_INTEGER,
  maxPathBytes: Number.MAX_SAFE_INTEGER,
  maxEntries: Number.MAX_SAFE_INTEGER,
  maxFileBytes: Number.MAX_SAFE_INTEGER,
  maxNewFifos: Number.MAX_SAFE_INTEGER,
});

/**
 * How many entries may vanish between listing and reading before a reconcile refuses to commit
 * (`TreeChangedError`): an agent deleting a few files during a turn-end persist is normal work;
 * a tree being wiped (`rm -rf`) while it is read is not, and would commit a torn revision.
 * 64 entries plus 0.5 % of those walked.
 */
export function vanishedTolerance(walked: number): number {
  return 64 + Math.floor(walked * 0.005);
}
