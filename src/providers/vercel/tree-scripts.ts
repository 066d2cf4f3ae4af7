/**
 * The shell scripts the provider runs inside a sandbox (cwd `SANDBOX_HOME`, relative paths only,
 * arguments as `$1`…). Kept as data so tests can read them and so they stay POSIX sh.
 */

/** Makes the tree root and the fleet directory and removes a ready marker (e.g. one baked into a snapshot). */
export const PREPARE_SCRIPT = 'mkdir -p workspace .fleet && rm -f .fleet/ready.json';

/** Removes the ready marker. */
export const CLEAR_READY_SCRIPT = 'rm -f .fleet/ready.json';

/**
 * Archives the tree into `$1` (gzip, pax format, hard links stored as files). GNU tar exits 1
 * when a file changed while it was read; like an rsync of a live tree that is still a usable
 * archive, so 1 is accepted (see `EXPORT_OK_EXIT_CODES`).
 */
export const EXPORT_SCRIPT = [
  'mkdir -p workspace .fleet || exit 90',
  'tar -czf "$1" --format=posix --hard-dereference -C workspace .',
].join('\n');
export const EXPORT_OK_EXIT_CODES = [0, 1] as const;

/** Replaces the tree's contents with the archive `$1` (keeping the root directory itself) and removes `$1`. */
export const IMPORT_SCRIPT = [
  'mkdir -p workspace || exit 90',
  'find workspace -mindepth 1 -delete || exit 91',
  'tar -xzpf "$1" --no-same-owner -C workspace',
  'rc=$?',
  'rm -f "$1"',
  'exit "$rc"',
].join('\n');

/** Removes the transfer archive `$1`. */
export const REMOVE_SCRIPT = 'rm -f "$1"';
