/**
 * The one I/O surface of a workspace for app pods (HTTP, the TypeScript client, the CLI): read,
 * write, list, stat, remove, exec. Warm when the address store names a live incarnation (the
 * operation goes to that sandbox), cold otherwise (the archive's current revision; a cold write
 * commits a new revision, fenced). See resolve-workspace-io.ts for the rules.
 */
import type { ExecResult } from '../providers/sandbox-provider.js';

/** Where an answer came from. */
export type IoSource = { readonly kind: 'live'; readonly handle: string; readonly generation: number } | { readonly kind: 'archive'; readonly revision: string | null };

export type EntryType = 'file' | 'dir' | 'symlink' | 'other';

export interface TreeEntry {
  /** Path relative to the tree root, '/'-separated. */
  readonly path: string;
  readonly type: EntryType;
  readonly size: number;
  readonly mode: number;
  /** ISO 8601 UTC. */
  readonly mtime: string;
  /** Content id (sha256 hex) when known without reading the file (archive entries). */
  readonly hash?: string;
  /** Symlink target (never followed). */
  readonly target?: string;
}

export interface IoRequestBase {
  readonly workspaceId: string;
  readonly signal: AbortSignal;
}

export interface WorkspaceIo {
  read(request: IoRequestBase & { readonly path: string; readonly revision?: string }): Promise<{ readonly content: Buffer; readonly source: IoSource }>;
  write(request: IoRequestBase & { readonly path: string; readonly content: Buffer; readonly mode?: number }): Promise<{ readonly source: IoSource; readonly bytes: number }>;
  remove(request: IoRequestBase & { readonly path: string }): Promise<{ readonly source: IoSource; readonly removed: boolean }>;
  stat(request: IoRequestBase & { readonly path: string; readonly revision?: string }): Promise<{ readonly entry: TreeEntry | null; readonly source: IoSource }>;
  list(request: IoRequestBase & { readonly path: string; readonly revision?: string }): Promise<{ readonly entries: readonly TreeEntry[]; readonly source: IoSource }>;
  exec(
    request: IoRequestBase & {
      readonly cmd: readonly string[];
      readonly cwd?: string;
      readonly env?: Readonly<Record<string, string>>;
      readonly stdin?: string;
      readonly timeoutMs: number;
      readonly onStdout?: (chunk: Buffer) => void;
      readonly onStderr?: (chunk: Buffer) => void;
    },
  ): Promise<ExecResult & { readonly source: IoSource }>;
}
