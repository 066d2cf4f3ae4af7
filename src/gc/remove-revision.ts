/**
 * Deletes one committed revision, never the one `current` points at. Format 1: directory and
 * manifest; the directory is first renamed to a temporary name, so a crash mid-delete leaves
 * litter, not a half-deleted revision with a manifest. Format 2: its record only; its objects
 * and trees go by reachability (the objects GC kind), since other revisions may share them.
 */
import { rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import type { ArchiveStore } from '../archive/archive-store.js';
import { checkIds } from '../providers/id-rules.js';

/** Throws a permanent `PayloadInvalid` (nothing removed) when either id breaks its rule. */
export async function removeRevision(archive: ArchiveStore, workspaceId: string, revision: string): Promise<boolean> {
  checkIds('revision removal', { workspaceId, revision });
  if ((await archive.current(workspaceId)) === revision) return false;
  const paths = archive.paths(workspaceId);
  await rm(paths.record(revision), { force: true });
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
