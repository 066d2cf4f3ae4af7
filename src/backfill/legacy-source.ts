/**
 * A legacy store the backfill migrates workspaces out of (seed 002, "M2 dual-read + lazy
 * backfill"). Two implementations: the flat blob directory (blob-legacy-source.ts) and
 * provider-native snapshots (native-legacy-source.ts).
 *
 * Terms:
 * - legacy file: one regular file of a workspace in the legacy store, named by its relative
 *   path as raw bytes ('/'-separated, exactly as it will appear in the archive tree).
 * - skipped entry: something in the legacy store that is never migrated (a symlink, a special
 *   file, a name that does not decode to a safe relative path); reported, never followed.
 */
import type { Readable } from 'node:stream';

export type BackfillSource = 'blob' | 'native';

export interface LegacyFile {
  /** Relative path as bytes, '/'-separated (no '..', '.', empty segments or NUL). */
  readonly rel: Buffer;
  /** The same path encoded like manifest paths (UTF-8, or `b64:` + base64). */
  readonly path: string;
  readonly size: number;
  /** Permission bits given to the copy. */
  readonly mode: number;
  readonly mtimeMs: number;
}

export interface SkippedEntry {
  /** The legacy name (encoded like manifest paths). */
  readonly name: string;
  readonly reason: 'symlink' | 'not-a-file' | 'hostile-name';
  readonly detail?: string;
}

export interface LegacyListing {
  /** Files sorted by `rel` bytes. */
  readonly files: readonly LegacyFile[];
  readonly skipped: readonly SkippedEntry[];
}

/** One page of legacy workspaces, in a stable (byte-sorted) order. */
export interface WorkspacePage {
  readonly workspaceIds: readonly string[];
  /** Resume after this id for the next page (the last id of this page). */
  readonly cursor: string | null;
  /** No workspaces follow this page. */
  readonly done: boolean;
  /** Workspaces the source holds in total (for progress). */
  readonly total: number;
  /** Workspaces up to and including this page (for progress). */
  readonly position: number;
}

/** An opened legacy workspace; `close()` releases what opening it took (scratch sandboxes). */
export interface LegacyWorkspace {
  readonly workspaceId: string;
  /** Where the files come from (a directory, or a snapshot id), for reports. */
  readonly origin: string;
  list(signal?: AbortSignal): Promise<LegacyListing>;
  /** Streams a file's bytes; never follows a symlink. */
  open(file: LegacyFile): Promise<Readable>;
  read(file: LegacyFile): Promise<Buffer>;
  /** sha256 hex of the file as the legacy store holds it. */
  checksum(file: LegacyFile, signal?: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

export interface LegacySource {
  readonly name: BackfillSource;
  /** Workspaces after `after` (exclusive), at most `limit`. */
  listWorkspaces(page: { readonly after: string | null; readonly limit: number }, signal?: AbortSignal): Promise<WorkspacePage>;
  /** Opens a workspace, or `null` when the legacy store holds nothing for it. */
  openWorkspace(workspaceId: string, signal: AbortSignal): Promise<LegacyWorkspace | null>;
}

/** Pages a sorted id list (shared by the sources). */
export function pageOf(sortedIds: readonly string[], after: string | null, limit: number): WorkspacePage {
  const start = after === null ? 0 : countUpTo(sortedIds, after);
  const workspaceIds = sortedIds.slice(start, start + limit);
  const position = start + workspaceIds.length;
  return { workspaceIds, cursor: workspaceIds.at(-1) ?? after, done: position >= sortedIds.length, total: sortedIds.length, position };
}

// Number of ids <= `id` in a sorted list (binary search).
function countUpTo(sorted: readonly string[], id: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
