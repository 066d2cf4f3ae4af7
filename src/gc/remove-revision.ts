/**
 * Deletes one committed revision (directory and manifest), never the one `current` points at.
 * The directory is first renamed to a temporary name, so a crash mid-delete leaves litter, not
 * a half-deleted revision with a manifest.
 */
import { rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import type { ArchiveStore } from '../archive/archive-store.js';
import { checkIds } from '../lib/id-rules.js';

/** Throws a permanent `PayloadInvalid` (nothing removed) when either id breaks its rule. */
export async function removeRevision(archive: ArchiveStore, workspaceId: string, revision: string): Promise<boolean> {
  checkIds('revision removal', { workspaceId, revision });
  if ((await archive.current(workspaceId)) === revision) return false;
  const paths = archive.paths(workspaceId);
  await rm(paths.manifest(revision), { force: true });
  const doomed = paths.tmp(`deleted-${randomBytes(3).toString('hex')}-${revision}`);
  try {
    await rename(paths.revision(revision), doomed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
  await rm(doomed, { recursive: true, force: true });
  return true;
}
