/**
 * Reads one file of a workspace's current archive revision without following any symlink out
 * of (or inside) the revision tree. `miss` means the revision has nothing at the path (nor at
 * any ancestor), so another store may be asked; `present` means the archive has something there
 * that is not a readable regular file (a directory, a symlink, a special file, or a path below
 * a file): the archive wins, and there is no content to return.
 */
import { lstat } from 'node:fs/promises';
import type { ArchiveStore } from '../archive/archive-store.js';
import { resolvePath } from '../archive/revision-reader.js';
import { absoluteBytes } from '../archive/tree-walk.js';
import { readRegularFile } from './open-regular-file.js';
import { pathState } from './path-state.js';

export type ArchiveRead = { readonly state: 'hit'; readonly content: Buffer; readonly revision: string } | { readonly state: 'present' | 'miss' };

// One attempt against the revision `current` names now; null when that revision vanished (GC).
async function readOnce(archive: ArchiveStore, workspaceId: string, rel: Buffer): Promise<ArchiveRead | null> {
  const revision = await archive.current(workspaceId);
  if (!revision) return { state: 'miss' };
  const record = await archive.readRecord(workspaceId, revision).catch(() => null);
  if (record) {
    // Format 2: a lookup down the trees (no listing), then the object.
    const found = await resolvePath(archive.objects, record.root, rel);
    if (found.state === 'absent') return { state: 'miss' };
    if (found.state !== 'node' || found.node.type !== 'f') return { state: 'present' };
    return { state: 'hit', content: await archive.objects.readObject(found.node.object), revision };
  }
  const root = archive.paths(workspaceId).revision(revision);
  const stats = await lstat(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (!stats) return null;
  if (!stats.isDirectory()) return { state: 'present' };
  const state = await pathState(root, rel);
  if (state === 'absent') return { state: 'miss' };
  if (state === 'blocked') return { state: 'present' };
  const content = await readRegularFile(absoluteBytes(root, rel));
  if (content) return { state: 'hit', content, revision };
  return (await pathState(root, rel)) === 'absent' ? null : { state: 'present' };
}

/** Reads `rel` from the current revision, retrying once if `current` moved mid-read. */
export async function readArchiveFile(archive: ArchiveStore, workspaceId: string, rel: Buffer): Promise<ArchiveRead> {
  return (await readOnce(archive, workspaceId, rel)) ?? (await readOnce(archive, workspaceId, rel)) ?? { state: 'miss' };
}
