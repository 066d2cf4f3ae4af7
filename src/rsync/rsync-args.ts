/**
 * rsync argument builders (pure). rsync copies committed revisions (written by the fleet alone,
 * never changed) into fresh directories: restores into a staging tree. It never reads a live
 * tree: rsync resolves source paths by string, so persist copies with directory handles instead
 * (persist/build-revision-tree.ts). Flags:
 * - `-rlpt --specials`: recurse, symlinks copied verbatim (never followed: no -L/-k/-K/
 *   --copy-unsafe-links), permissions and times, FIFOs kept; no devices, no owners.
 * - `-H`: names of one inode within the revision stay one inode (hard links are preserved).
 * - `--sparse`: runs of zeros become holes, so a sparse file stays sparse.
 * - `--modify-window=-1`: compare mtimes at full (nanosecond) precision.
 * - `--timeout`: an I/O stall fails (exit 30) instead of hanging.
 */
export const RSYNC_BASE_FLAGS = ['-rlptH', '--specials', '--sparse', '--modify-window=-1'] as const;

export interface SnapshotArgs {
  /** Source tree (a directory; the trailing slash is added here). */
  readonly source: string;
  /** Fresh destination directory. */
  readonly dest: string;
  readonly ioTimeoutS: number;
}

// A directory argument with exactly one trailing slash ("copy the contents").
const contents = (dir: string) => `${dir.replace(/\/+$/, '')}/`;

/** Copies `source` into the fresh `dest`. */
export function snapshotArgs({ source, dest, ioTimeoutS }: SnapshotArgs): string[] {
  return [
    ...RSYNC_BASE_FLAGS,
    `--timeout=${ioTimeoutS}`,
    '--',
    contents(source),
    contents(dest),
  ];
}
