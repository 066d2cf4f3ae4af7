/**
 * rsync argument builders (pure). Flags are chosen for sandbox-controlled trees:
 * - `-rlpt --specials`: recurse, symlinks copied verbatim (never followed: no -L/-k/-K/
 *   --copy-unsafe-links), permissions and times, FIFOs/sockets kept; no devices, no owners.
 * - `--modify-window=-1`: compare mtimes at full (nanosecond) precision, so a same-second,
 *   same-size rewrite is never skipped by the quick check.
 * - rsync's default temp-file-and-rename never writes into an existing inode, so a destination
 *   pre-filled with hard links to an older revision (`linkUnchanged`) is never modified through them.
 * - `--timeout`: an I/O stall fails (exit 30) instead of hanging.
 */
export const RSYNC_BASE_FLAGS = ['-rlpt', '--specials', '--modify-window=-1'] as const;

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

export interface ListedArgs {
  /** Source tree; the NUL-separated list on stdin names paths relative to it. */
  readonly source: string;
  /** Destination directory (already holding the hard-linked unchanged files). */
  readonly dest: string;
  readonly ioTimeoutS: number;
}

/**
 * Copies exactly the paths listed on stdin (NUL-separated, relative to `source`) into `dest`:
 * no recursion (a listed directory gets its mode and times, not its contents), and a listed
 * path that vanished since it was listed is skipped (`--ignore-missing-args`): it is gone from
 * the live tree, so it is gone from a mirror too, and an upload-only run adds it back from the
 * current revision afterwards.
 */
export function listedArgs({ source, dest, ioTimeoutS }: ListedArgs): string[] {
  return [
    '-lpt',
    '--specials',
    '--modify-window=-1',
    `--timeout=${ioTimeoutS}`,
    '--files-from=-',
    '--from0',
    '--ignore-missing-args',
    '--',
    contents(source),
    contents(dest),
  ];
}
