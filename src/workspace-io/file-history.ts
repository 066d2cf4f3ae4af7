/**
 * The kept revisions in which one path changed, newest first
 * (`GET /v1/workspaces/{id}/files/{path}/history`).
 *
 * The walk follows the revision records' `parent` chain from the current revision, not the
 * attached history by time (workspaceHistory): `parent` is the revision each one was built on,
 * so comparing a revision with its parent says exactly what that revision changed. A rejected
 * checkpoint or a never-attached revision is off the chain (it changed nothing the workspace
 * kept), no clock is trusted across hosts, and only the archive is read (no Redis beyond the
 * current head). The chain ends at the first revision (`parent: null`), or at a parent that is no
 * longer kept (retention) or is format 1: then the oldest change cannot be told and `truncated`
 * says older changes may exist.
 *
 * Each step compares the node at the path in a revision with the one in its parent by what the
 * tree says (type, content id, mode, symlink target, a directory's tree id), never by content;
 * equal roots are skipped without a lookup. A path below a file is absent.
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import { nodeChanged } from '../archive/diff-trees.js';
import type { ObjectStore } from '../archive/object-store.js';
import { resolvePath } from '../archive/revision-reader.js';
import type { RevisionRecord } from '../archive/revision-record.js';
import type { TreeNode } from '../archive/tree-object.js';
import { entryOf, keptRecord } from './cold-io.js';
import { currentRevision, type CurrentRevisionDeps } from './current-revision.js';
import type { EntryType } from './workspace-io.js';

export interface FileHistoryDeps extends CurrentRevisionDeps {
  readonly archive: Pick<ArchiveStore, 'current' | 'readRecord' | 'formatOf'> & { readonly objects: Pick<ObjectStore, 'readTree'> };
}

export type PathChange = 'added' | 'changed' | 'deleted';

/** A revision that changed the path, and what the path is in it (nothing when deleted). */
export interface FileHistoryRow {
  readonly revision: string;
  readonly createdAt: string;
  readonly generation: number;
  readonly reason: string;
  readonly change: PathChange;
  readonly type?: EntryType;
  readonly size?: number;
  readonly mode?: number;
  readonly hash?: string;
}

export interface FileHistory {
  readonly workspaceId: string;
  readonly path: string;
  readonly revisions: FileHistoryRow[];
  /** Not every change is listed: an older one is past the limit, or the chain reaches a revision no longer kept (or in format 1) before its start. */
  readonly truncated: boolean;
}

export interface FileHistoryRequest {
  readonly workspaceId: string;
  /** The validated path and its segments (io-path.ts). */
  readonly path: string;
  readonly parts: readonly string[];
  readonly limit: number;
}

// What the path is in one tree (null: absent, or below a non-directory).
async function nodeIn(archive: FileHistoryDeps['archive'], root: string, rel: Buffer): Promise<TreeNode | null> {
  const found = await resolvePath(archive.objects, root, rel);
  return found.state === 'node' ? found.node : null;
}

// How the path went from `before` to `now`; null when it did not change.
function changeOf(before: TreeNode | null, now: TreeNode | null): PathChange | null {
  if (!before) return now ? 'added' : null;
  if (!now) return 'deleted';
  return nodeChanged(before, now) ? 'changed' : null;
}

// The row of a revision that changed the path.
function rowOf(record: RevisionRecord, change: PathChange, path: string, node: TreeNode | null): FileHistoryRow {
  const base = { revision: record.revision, createdAt: record.createdAt, generation: record.generation, reason: record.reason, change };
  if (!node) return base;
  const { type, size, mode, hash } = entryOf(path, node);
  return { ...base, type, size, mode, ...(hash === undefined ? {} : { hash }) };
}

export async function fileHistory(deps: FileHistoryDeps, request: FileHistoryRequest): Promise<FileHistory> {
  const { workspaceId, path, limit } = request;
  const rel = Buffer.from(request.parts.join('/'));
  const rows: FileHistoryRow[] = [];
  const answer = (truncated: boolean): FileHistory => ({ workspaceId, path, revisions: rows, truncated });

  const head = await currentRevision(deps, workspaceId);
  if (!head) return answer(false);
  let record = await keptRecord(deps.archive, workspaceId, head, 'the history of a path');
  let node = await nodeIn(deps.archive, record.root, rel);
  // A chain that comes back on itself is damaged records; it ends there.
  const seen = new Set<string>([record.revision]);
  for (;;) {
    if (record.parent === null) {
      if (!node) return answer(false);
      if (rows.length >= limit) return answer(true);
      rows.push(rowOf(record, 'added', path, node));
      return answer(false);
    }
    const parent = await deps.archive.readRecord(workspaceId, record.parent);
    // Pruned by retention, or format 1: what this revision did to the path cannot be told.
    if (!parent || seen.has(parent.revision)) return answer(true);
    seen.add(parent.revision);
    const before = parent.root === record.root ? node : await nodeIn(deps.archive, parent.root, rel);
    const change = changeOf(before, node);
    if (change) {
      if (rows.length >= limit) return answer(true);
      rows.push(rowOf(record, change, path, node));
    }
    record = parent;
    node = before;
  }
}
