/**
 * What changed between two kept revisions of a workspace (`GET /v1/workspaces/{id}/diff`): their
 * format 2 trees compared by id (archive/diff-trees.ts), so the cost follows the change. `to`
 * defaults to the current revision. A format 1 revision is 501 (run `fleet archive migrate`).
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import { diffTrees, type TreeChange } from '../archive/diff-trees.js';
import type { TreeNode } from '../archive/tree-object.js';
import { RevisionNotFoundError } from '../persist/rollback-workspace.js';
import { entryOf, keptRecord } from './cold-io.js';
import { currentRevision, type CurrentRevisionDeps } from './current-revision.js';
import type { EntryType } from './workspace-io.js';

export interface RevisionDiffDeps extends CurrentRevisionDeps {
  readonly archive: ArchiveStore;
}

/** One changed path: what it is in `to` (in `from` when deleted), and what it was (changed). */
export interface DiffEntry {
  readonly path: string;
  readonly type: EntryType;
  /** Size of a file (0 for anything else). */
  readonly size: number;
  readonly mode: number;
  /** Content id of a file (sha256 hex). */
  readonly hash?: string;
  /** Symlink target (never followed). */
  readonly target?: string;
  readonly previousSize?: number;
  readonly previousMode?: number;
  readonly previousHash?: string;
  readonly previousTarget?: string;
}

export interface RevisionDiff {
  readonly workspaceId: string;
  readonly from: string;
  readonly to: string;
  readonly added: DiffEntry[];
  readonly changed: DiffEntry[];
  readonly deleted: DiffEntry[];
  /** Entries of each list (of what is listed, when truncated). */
  readonly counts: { readonly added: number; readonly changed: number; readonly deleted: number };
  /** The answer stopped at `limit` entries; more changes follow. */
  readonly truncated: boolean;
  /** Tree objects read to answer (identical subtrees are never read). */
  readonly treesRead: number;
}

export interface DiffRequest {
  readonly workspaceId: string;
  readonly from: string;
  /** Default: the current revision. */
  readonly to?: string;
  readonly limit: number;
}

// A tree node as a diff entry at `path` (the API's entry without its mtime: a time alone is no change).
function entry(path: string, node: TreeNode): DiffEntry {
  const { mtime: _mtime, ...rest } = entryOf(path, node);
  return rest;
}

// One change as the entry of its list.
function entryOfChange(change: TreeChange): DiffEntry {
  const path = change.path.toString();
  if (change.kind !== 'changed') return entry(path, (change.after ?? change.before)!);
  const was = entry(path, change.before!);
  return {
    ...entry(path, change.after!),
    previousSize: was.size,
    previousMode: was.mode,
    ...(was.hash === undefined ? {} : { previousHash: was.hash }),
    ...(was.target === undefined ? {} : { previousTarget: was.target }),
  };
}

export async function diffRevisions(deps: RevisionDiffDeps, request: DiffRequest): Promise<RevisionDiff> {
  const { workspaceId, from } = request;
  const fromRoot = (await keptRecord(deps.archive, workspaceId, from, 'a diff')).root;
  const to = request.to ?? (await currentRevision(deps, workspaceId));
  if (!to) throw new RevisionNotFoundError(`workspace ${workspaceId} has no current revision`, { context: { workspaceId } });
  const toRoot = (await keptRecord(deps.archive, workspaceId, to, 'a diff')).root;
  const diff = await diffTrees(deps.archive.objects, fromRoot, toRoot, { limit: request.limit });
  const lists = { added: [] as DiffEntry[], changed: [] as DiffEntry[], deleted: [] as DiffEntry[] };
  for (const change of diff.changes) lists[change.kind].push(entryOfChange(change));
  return {
    workspaceId,
    from,
    to,
    ...lists,
    counts: { added: lists.added.length, changed: lists.changed.length, deleted: lists.deleted.length },
    truncated: diff.truncated,
    treesRead: diff.treesRead,
  };
}
