/**
 * Where the fleet keeps things inside a Vercel sandbox.
 *
 * Layout (all under the session's default cwd, which the SDK reports as `/vercel/sandbox`):
 *
 * - `/vercel/sandbox/workspace`        the tree: exactly the files persist archives and restore replaces.
 * - `/vercel/sandbox/.fleet/ready.json` the ready marker. It lives OUTSIDE the tree on purpose: a
 *   restore (`importTree`) wipes and rewrites the tree, and persist exports only the tree, so the
 *   marker can never be archived, restored from an old revision, or survive a half-done restore.
 * - `/vercel/sandbox/.fleet/*.tgz`     transfer archives of `openTree` / `importTree` (deleted after use).
 *
 * Commands the provider runs itself use paths relative to `SANDBOX_HOME` (their cwd), never
 * absolute ones, so they mean the same inside a real sandbox and inside the loopback stand-in.
 */
import path from 'node:path';

/** The session's default working directory on Vercel Sandbox. */
export const SANDBOX_HOME = '/vercel/sandbox';
/** The tree root, relative to `SANDBOX_HOME`. */
export const TREE_DIR = 'workspace';
/** The fleet-private directory (marker, transfer archives), relative to `SANDBOX_HOME`. */
export const FLEET_DIR = '.fleet';
/** The ready marker, relative to `SANDBOX_HOME`. */
export const READY_MARKER = `${FLEET_DIR}/ready.json`;

/** The absolute sandbox path of `relative` (a path under `SANDBOX_HOME`). */
export function sandboxPath(relative: string): string {
  return path.posix.join(SANDBOX_HOME, relative);
}

/**
 * Normalises a path relative to the tree root (`a/b`, `./a//b`) or returns `null` when it is
 * absolute or climbs out with `..`.
 */
export function treeRelativePath(input: string): string | null {
  if (input.includes('\0') || path.posix.isAbsolute(input)) return null;
  const segments = input.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.some((segment) => segment === '..')) return null;
  return segments.join('/');
}

/** The absolute sandbox path of a tree-relative path (already checked by `treeRelativePath`). */
export function treePath(relative: string): string {
  return relative === '' ? sandboxPath(TREE_DIR) : sandboxPath(`${TREE_DIR}/${relative}`);
}
