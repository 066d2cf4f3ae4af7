/**
 * Which revision an export reads and where its data is: `current` by default, in whichever
 * format it is stored (a format 2 record wins over a format 1 directory of the same id, as for
 * every reader). Reads the archive only: no Redis is needed to export.
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import { RevisionNotFoundError } from '../persist/rollback-workspace.js';

interface SourceBase {
  readonly workspaceId: string;
  readonly revision: string;
  readonly files: number;
  readonly bytes: number;
  /** Every path of the revision (for progress). */
  readonly entries: number;
}

export type ExportSource = (SourceBase & { readonly format: 2; readonly root: string }) | (SourceBase & { readonly format: 1; readonly dir: string });

export async function exportSource(archive: ArchiveStore, workspaceId: string, requested?: string): Promise<ExportSource> {
  const revision = requested ?? (await archive.current(workspaceId));
  if (!revision) throw new RevisionNotFoundError(`workspace ${workspaceId} has no current revision in ${archive.root}`, { context: { workspaceId } });
  const format = await archive.formatOf(workspaceId, revision);
  const base = { workspaceId, revision };
  if (format === 2) {
    const record = (await archive.readRecord(workspaceId, revision))!;
    return { ...base, format, root: record.root, files: record.files, bytes: record.bytes, entries: record.entries };
  }
  const manifest = format === 1 ? await archive.readManifest(workspaceId, revision) : null;
  if (!manifest) throw new RevisionNotFoundError(`workspace ${workspaceId} has no committed revision ${revision}`, { context: { workspaceId, revision } });
  return { ...base, format: 1, dir: archive.paths(workspaceId).revision(revision), files: manifest.files, bytes: manifest.bytes, entries: manifest.entries.length };
}
