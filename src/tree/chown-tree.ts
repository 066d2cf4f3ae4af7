/**
 * Gives a whole tree to one uid by directory handles: every entry is changed through
 * `/proc/self/fd/<fd>/<name>` with `lchown`, which never follows a final symlink, and
 * directories are entered with `O_NOFOLLOW` (never `chown -R` on a path). Used on staging trees
 * (a restore, a copy of a base) before they become a workspace's live tree, and on a live tree
 * adopted by a sandbox uid.
 *
 * The kernel clears setuid/setgid on a file whose owner changes, even for root; those bits are
 * put back (fchmod of the file opened with O_NOFOLLOW), so a tree keeps its exact modes.
 */
import { fchmod as fchmodCallback, fchown as fchownCallback } from 'node:fs';
import { lchown, open } from 'node:fs/promises';
import type { DirHandle } from './dir-handle.js';
import { READ_FILE_FLAGS } from './dir-handle.js';

const SPECIAL_BITS = 0o6000;

// fchown(2) of an open descriptor.
function fchown(fd: number, uid: number, gid: number): Promise<void> {
  return new Promise((resolve, reject) => fchownCallback(fd, uid, gid, (error) => (error ? reject(error) : resolve())));
}

// fchmod(2) of an open descriptor.
function fchmod(fd: number, mode: number): Promise<void> {
  return new Promise((resolve, reject) => fchmodCallback(fd, mode, (error) => (error ? reject(error) : resolve())));
}

/** Changes the owner of `dir` and everything beneath it to `uid:gid`; returns the entries changed. */
export async function chownTree(dir: DirHandle, uid: number, gid: number): Promise<number> {
  const mode = Number((await dir.stat()).mode) & 0o7777;
  await fchown(dir.fd, uid, gid);
  // A directory keeps setgid across chown on Linux, but restore it anyway: the rule is "modes unchanged".
  if ((mode & SPECIAL_BITS) !== 0) await fchmod(dir.fd, mode);
  let changed = 1;
  for (const name of await dir.names()) {
    const stats = await dir.lstat(name);
    if (stats.isDirectory()) {
      const child = await dir.openDir(name);
      try {
        changed += await chownTree(child, uid, gid);
      } finally {
        await child.close();
      }
      continue;
    }
    await lchown(dir.entry(name), uid, gid);
    changed += 1;
    const bits = Number(stats.mode) & 0o7777;
    if (stats.isFile() && (bits & SPECIAL_BITS) !== 0) {
      const file = await open(dir.entry(name), READ_FILE_FLAGS);
      try {
        await fchmod(file.fd, bits);
      } finally {
        await file.close();
      }
    }
  }
  return changed;
}

/** Changes the owner of one open directory (not its contents). */
export function chownDir(dir: DirHandle, uid: number, gid: number): Promise<void> {
  return fchown(dir.fd, uid, gid);
}
