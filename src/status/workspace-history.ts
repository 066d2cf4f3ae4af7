/**
 * A workspace's history: checkpoint records joined with the archive's revisions (a revision
 * committed but never recorded, e.g. after Redis lost writes, still shows, as unattached).
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import type { CheckpointStore } from '../state/checkpoint-store.js';

export interface HistoryRow {
  readonly revision: string;
  readonly checkpointId: string | null;
  readonly kind: 'portable_workspace' | 'provider_native';
  readonly generation: number;
  readonly reason: string;
  readonly turnId: string | null;
  readonly files: number;
  readonly bytes: number;
  readonly attached: boolean;
  readonly current: boolean;
  readonly createdAt: string;
}

export interface HistoryDeps {
  readonly archive: Pick<ArchiveStore, 'current' | 'readManifest' | 'revisions'>;
  readonly checkpoints: Pick<CheckpointStore, 'current' | 'history'>;
}

export async function workspaceHistory(deps: HistoryDeps, workspaceId: string): Promise<HistoryRow[]> {
  const [records, revisions, head, linked] = await Promise.all([
    deps.checkpoints.history(workspaceId),
    deps.archive.revisions(workspaceId),
    deps.checkpoints.current(workspaceId),
    deps.archive.current(workspaceId),
  ]);
  const rows: HistoryRow[] = records.map((c) => ({
    revision: c.workspaceRevision,
    checkpointId: c.id,
    kind: c.kind,
    generation: c.generation,
    reason: c.reason,
    turnId: c.sourceTurnId,
    files: c.files,
    bytes: c.bytes,
    attached: c.attachedAt !== null,
    current: head ? head.id === c.id : c.workspaceRevision === linked,
    createdAt: new Date(c.createdAt).toISOString(),
  }));
  const recorded = new Set(records.map((c) => c.workspaceRevision));
  for (const revision of revisions) {
    if (recorded.has(revision)) continue;
    const manifest = await deps.archive.readManifest(workspaceId, revision);
    if (!manifest) continue;
    rows.push({
      revision,
      checkpointId: null,
      kind: 'portable_workspace',
      generation: manifest.generation,
      reason: manifest.reason,
      turnId: manifest.turnId,
      files: manifest.files,
      bytes: manifest.bytes,
      attached: false,
      current: !head && revision === linked,
      createdAt: manifest.createdAt,
    });
  }
  return rows.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
}
