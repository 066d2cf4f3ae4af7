/**
 * Removes the format 1 copy of a migrated revision (its directory and manifest), only once its
 * record is durable and `current` no longer names the directory. The directory is first renamed
 * to a temporary name (`revs/.tmp-migrated-…`), so a crash mid-removal leaves litter the `litter`
 * GC collects, never a half-removed tree under the revision's name; the manifest goes after the
 * rename. Unlinking the directory's names leaves other revisions' hard links to the same inodes.
 */
import { randomBytes } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import type { ArchiveStore } from '../archive/archive-store.js';
import { fsyncDir } from '../archive/fsync.js';
import { classifyStorageError, errnoOf } from '../errors/classify-storage-error.js';
import { checkIds } from '../providers/id-rules.js';
import { removeTree } from '../tree/remove-tree.js';

export async function removeFormat1(archive: ArchiveStore, workspaceId: string, revision: string): Promise<void> {
  checkIds('format 1 removal', { workspaceId, revision });
  const paths = archive.paths(workspaceId);
  const doomed = paths.tmp(`migrated-${randomBytes(3).toString('hex')}-${revision}`);
  let moved = true;
  await rename(paths.revision(revision), doomed).catch((error: unknown) => {
    if (errnoOf(error) !== 'ENOENT') throw classifyStorageError(error, 'remove format 1 revision', paths.revision(revision));
    moved = false;
  });
  await rm(paths.manifest(revision), { force: true }).catch((error: unknown) => Promise.reject(classifyStorageError(error, 'remove format 1 manifest', paths.manifest(revision))));
  await fsyncDir(paths.revs).catch((error: unknown) => Promise.reject(classifyStorageError(error, 'fsync', paths.revs)));
  if (moved) await removeTree(doomed);
}
