/**
 * rsync argument builders (pure). Flags are chosen for sandbox-controlled trees:
 * - `-rlpt --specials`: recurse, symlinks copied verbatim (never followed: no -L/-k/-K/
 *   --copy-unsafe-links), permissions and times, FIFOs/sockets kept; no devices, no owners.
 * - `--modify-window=-1`: compare mtimes at full (nanosecond) precision, so a same-second,
 *   same-size rewrite is never skipped by the quick check.
 * - `--link-dest` relative to the destination: unchanged files become hard links to the
 *   current revision; rsync's default temp-file-and-rename never writes into a linked inode.
 * - `--timeout`: an I/O stall fails (exit 30) instead of hanging.
 */
export const RSYNC_BASE_FLAGS = ['-rlpt', '--specials', '--modify-window=-1'] as const;

export interface SnapshotArgs {
  /** Source tree (a directory; the trailing slash is added here). */
  readonly source: string;
  /** Fresh destination directory. */
  readonly dest: string;
  /** Path of an existing revision relative to `dest`, for hard links. */
  readonly linkDest?: string;
  readonly ioTimeoutS: number;
}

// A directory argument with exactly one trailing slash ("copy the contents").
const contents = (dir: string) => `${dir.replace(/\/+$/, '')}/`;

/** Copies `source` into the fresh `dest`, hard-linking unchanged files from `linkDest`. */
export function snapshotArgs({ source, dest, linkDest, ioTimeoutS }: SnapshotArgs): string[] {
  return [
    ...RSYNC_BASE_FLAGS,
    `--timeout=${ioTimeoutS}`,
    ...(linkDest ? [`--link-dest=${linkDest}`] : []),
    '--',
    contents(source),
    contents(dest),
  ];
}
