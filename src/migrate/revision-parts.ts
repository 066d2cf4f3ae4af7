/**
 * Which parts of each revision of a workspace are on disk: its format 2 record, its format 1
 * directory, its format 1 manifest. A migration plans and resumes from this alone: a revision
 * with a directory and a manifest but no record is still to convert; one with a record and
 * format 1 parts left was converted by a run that stopped before it removed them.
 */
import { lstat, readdir } from 'node:fs/promises';
import type { ArchiveStore } from '../archive/archive-store.js';
import { MANIFEST_SUFFIX, RECORD_SUFFIX, REVISION_ID_PATTERN } from '../archive/archive-paths.js';
import { errnoOf } from '../errors/classify-storage-error.js';

export interface RevisionParts {
  readonly revision: string;
  readonly record: boolean;
  readonly directory: boolean;
  readonly manifest: boolean;
}

// Names in a directory; none when it does not exist.
async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return [];
    throw error;
  }
}

/** The parts of every revision id of `workspaceId` that has any, oldest first. */
export async function revisionParts(archive: ArchiveStore, workspaceId: string): Promise<RevisionParts[]> {
  const names = new Set(await namesIn(archive.paths(workspaceId).revs));
  const ids = new Set<string>();
  for (const name of names) {
    const id = name.endsWith(RECORD_SUFFIX) ? name.slice(0, -RECORD_SUFFIX.length) : name.endsWith(MANIFEST_SUFFIX) ? name.slice(0, -MANIFEST_SUFFIX.length) : name;
    if (REVISION_ID_PATTERN.test(id)) ids.add(id);
  }
  return [...ids].sort().map((revision) => ({
    revision,
    record: names.has(`${revision}${RECORD_SUFFIX}`),
    directory: names.has(revision),
    manifest: names.has(`${revision}${MANIFEST_SUFFIX}`),
  }));
}

/** The parts of one revision now. */
export async function partsOf(archive: ArchiveStore, workspaceId: string, revision: string): Promise<RevisionParts> {
  const paths = archive.paths(workspaceId);
  const present = async (file: string, directory: boolean) => {
    const stats = await lstat(file).catch((error: unknown) => (errnoOf(error) === 'ENOENT' ? null : Promise.reject(error)));
    return stats !== null && stats.isDirectory() === directory;
  };
  return { revision, record: await present(paths.record(revision), false), directory: await present(paths.revision(revision), true), manifest: await present(paths.manifest(revision), false) };
}
