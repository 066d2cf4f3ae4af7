/**
 * Upload-only persists keep files the live tree no longer has: after rsync copied the live tree
 * into the new revision, every path of the previous revision that the new one lacks is added
 * back as a hard link (files), a directory, or a symlink. Nothing is ever followed: a path is
 * only added when its parent is a real directory in the new revision (if the live tree turned a
 * directory into a file or a symlink, the live tree wins).
 */
import { chmod, link, lstat, mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { absoluteBytes, decodePath } from '../archive/tree-walk.js';
import type { RevisionManifest } from '../archive/manifest.js';

// lstat that returns null for a missing path.
async function lstatOrNull(p: Buffer) {
  try {
    return await lstat(p);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Adds back paths of `previous` missing from `target`; returns how many were kept. `present`
 * names paths known to exist in `target` already (they are not looked up).
 */
export async function mergeMissing(
  previousRoot: string,
  previous: RevisionManifest,
  target: string,
  signal?: AbortSignal,
  present: ReadonlySet<string> = new Set(),
): Promise<number> {
  let kept = 0;
  for (const entry of previous.entries) {
    if (signal?.aborted) throw signal.reason;
    if (entry.t !== 'f' && entry.t !== 'd' && entry.t !== 'l') continue;
    if (present.has(entry.p)) continue;
    const rel = decodePath(entry.p);
    const dest = absoluteBytes(target, rel);
    if (await lstatOrNull(dest)) continue;
    const parentRel = path.posix.dirname(rel.toString('latin1'));
    const parent = parentRel === '.' ? Buffer.from(target) : absoluteBytes(target, Buffer.from(parentRel, 'latin1'));
    const parentStats = await lstatOrNull(parent);
    if (!parentStats?.isDirectory()) continue;
    if (entry.t === 'd') {
      await mkdir(dest);
      await chmod(dest, entry.m);
    }
    else if (entry.t === 'f') await link(absoluteBytes(previousRoot, rel), dest);
    else await symlink(decodePath(entry.l!), dest);
    kept += 1;
  }
  return kept;
}
