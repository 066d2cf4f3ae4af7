/**
 * What a tree holds at a relative path, found with lstat only (nothing followed): `absent`
 * (a file could be created there), `present` (something is there), or `blocked` (an ancestor
 * is not a real directory, so nothing can be created there without following or replacing it).
 */
import { lstat } from 'node:fs/promises';
import { absoluteBytes } from '../archive/tree-walk.js';

export type PathState = 'absent' | 'present' | 'blocked';

// lstat's verdict on one path: missing, a real directory, or something else.
async function kindOf(path: Buffer): Promise<'missing' | 'dir' | 'other'> {
  try {
    return (await lstat(path)).isDirectory() ? 'dir' : 'other';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'missing';
    if (code === 'ENOTDIR') return 'other';
    throw error;
  }
}

/** State of `rel` under `root`; `dirs` caches ancestor verdicts across calls on one tree. */
export async function pathState(root: string, rel: Buffer, dirs = new Map<string, 'missing' | 'dir' | 'other'>()): Promise<PathState> {
  for (let at = rel.indexOf(0x2f); at !== -1; at = rel.indexOf(0x2f, at + 1)) {
    const prefix = rel.subarray(0, at);
    const key = prefix.toString('latin1');
    let kind = dirs.get(key);
    if (kind === undefined) {
      kind = await kindOf(absoluteBytes(root, prefix));
      dirs.set(key, kind);
    }
    if (kind === 'missing') return 'absent';
    if (kind === 'other') return 'blocked';
  }
  return (await kindOf(absoluteBytes(root, rel))) === 'missing' ? 'absent' : 'present';
}
