/**
 * The shell scripts the provider runs inside a sandbox (cwd `SANDBOX_HOME`, relative paths only,
 * arguments as `$1`…). Kept as data so tests can read them and so they stay POSIX sh.
 */

/** Makes the tree root and the fleet directory and removes a ready marker (e.g. one baked into a snapshot). */
export const PREPARE_SCRIPT = 'mkdir -p workspace .fleet && rm -f .fleet/ready.json';

/** Removes the ready marker. */
export const CLEAR_READY_SCRIPT = 'rm -f .fleet/ready.json';

/**
 * One listing record per entry, fields NUL-terminated so any name survives (newlines included):
 * `<type> <size> <mode> <mtime> <ctime> <inode> <device>`, the path relative to the tree, the
 * symlink target (empty for anything else). Times are seconds with up to ten decimals as GNU
 * find prints them (`%T@`). Parsed, without trusting a byte of it, by `parse-listing.ts`.
 */
export const LISTING_RECORD = '%y %s %m %T@ %C@ %i %D\\0%P\\0%l\\0';
/** The same record for a directory the sandbox's user cannot read or enter (type `u`, not descended). */
export const CLOSED_DIR_RECORD = 'u %s %m %T@ %C@ %i %D\\0%P\\0\\0';
/** The record of `DELTA_SCRIPT`'s second look at the files it archived (paths as asked: `./a/b`). */
export const RESTAT_RECORD = '%y %s %m %T@ %C@ %i %D\\0%p\\0%l\\0';

/**
 * Lists the tree into `$1` (gzip of `LISTING_RECORD`s), without descending into directories the
 * user cannot read (they are listed as `u`: kept as the host has them, never taken as emptied).
 * find exits 1 when an entry vanished while it walked (a live tree): the listing is still good.
 * stdout: the sandbox clock before the listing began (ns), then one line for each margin given
 * (`$2`, `$3`, ns): `1` when a directory's ctime, looked at again after the walk, is not older
 * than the clock less that margin (an entry was created, removed or renamed in it since the walk
 * began, or may have been), `0` when none is, `1` too when that look failed. With every listed
 * entry also older than the clock less the margin, the listing is the tree at one instant. The
 * script waits the fine margin (`SANDBOX_RACY_MARGIN_NS`, 20 ms) before it reads the clock, so a
 * write that ended just before the listing began (a turn end's last one) does not count as moving.
 */
export const LIST_SCRIPT = [
  'mkdir -p workspace .fleet || exit 90',
  'cd workspace || exit 90',
  // Waits out the fine margin first: a write just before the listing is then older than the clock less it.
  'sleep 0.02 2>/dev/null',
  'clock=$(date +%s%N) || exit 91',
  'echo "$clock"',
  `find . -mindepth 1 \\( -type d ! \\( -readable -executable \\) -prune -printf '${CLOSED_DIR_RECORD}' \\) -o -printf '${LISTING_RECORD}' > "../$1.raw"`,
  'rc=$?',
  'gzip -c < "../$1.raw" > "../$1" || exit 92',
  'rm -f "../$1.raw"',
  '[ "$rc" -le 1 ] || exit 93',
  'moved() { t=$((clock - $1)); s=$(find . -type d \\( ! \\( -readable -executable \\) -prune -o -true \\) -newerct "@$((t / 1000000000)).$(printf %09d $((t % 1000000000)))" -printf x -quit 2>/dev/null) || s=x; [ -z "$s" ] && echo 0 || echo 1; }',
  'moved "$2"',
  'moved "$3"',
].join('\n');

/**
 * Archives the files named in `$1` (NUL-separated, `./`-prefixed paths relative to the tree)
 * into `$2` (gzip, GNU format: exact name bytes, hard links stored as files, no recursion), then
 * looks at each of them again. stdout: the sandbox clock before the archive was made (ns), a
 * newline, and base64 of the gzipped `RESTAT_RECORD`s. A file that vanished or cannot be read is
 * left out (`--ignore-failed-read`); GNU tar exits 1 when a file changed while it was read, which
 * the second look catches file by file. `$1` is removed.
 */
export const DELTA_SCRIPT = [
  'cd workspace || exit 90',
  'date +%s%N || exit 91',
  'tar -czf "../$2" --format=gnu --hard-dereference --null --no-recursion --ignore-failed-read -T "../$1"',
  'rc=$?',
  `xargs -0 -r sh -c 'exec find "$@" -maxdepth 0 -printf "$0"' '${RESTAT_RECORD}' < "../$1" 2>/dev/null | gzip -c | base64 -w0`,
  'echo',
  'rm -f "../$1"',
  '[ "$rc" -le 1 ] || exit "$rc"',
].join('\n');

/** Replaces the tree's contents with the archive `$1` (keeping the root directory itself) and removes `$1`. */
export const IMPORT_SCRIPT = [
  'mkdir -p workspace || exit 90',
  'find workspace -mindepth 1 -delete || exit 91',
  'tar -xzpf "$1" --no-same-owner -C workspace',
  'rc=$?',
  'rm -f "$1"',
  'exit "$rc"',
].join('\n');

/** Removes transfer files (`$1`…, relative paths). */
export const REMOVE_SCRIPT = 'rm -f -- "$@"';
