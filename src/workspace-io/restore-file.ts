/**
 * Puts one file back as a kept revision holds it, content and mode
 * (`POST /v1/workspaces/{id}/files/{path}/restore`). The restore is a write through the one
 * resolver (`io.write`): into the live sandbox when one is live, else a cold write (a new
 * revision the next provision restores), with the same quota and size rules as any write.
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import type { Config } from '../config.js';
import { PayloadTooLargeError } from '../errors/payload-too-large-error.js';
import { fileNodeAt, keptRecord } from './cold-io.js';
import { filePath } from './io-path.js';
import type { IoSource, WorkspaceIo } from './workspace-io.js';

export interface RestoreFileDeps {
  readonly archive: ArchiveStore;
  readonly io: Pick<WorkspaceIo, 'write'>;
  readonly config: { readonly http: Pick<Config['http'], 'fileMaxBytes'> };
}

export interface RestoreFileRequest {
  readonly workspaceId: string;
  readonly path: string;
  /** The kept revision to take the file from. */
  readonly revision: string;
  readonly signal: AbortSignal;
}

export interface RestoredFile {
  readonly workspaceId: string;
  readonly path: string;
  /** The revision the file was restored from. */
  readonly revision: string;
  readonly bytes: number;
  /** Where the write went: the live sandbox, or the new archive revision. */
  readonly source: IoSource;
}

export async function restoreFile(deps: RestoreFileDeps, { workspaceId, path, revision, signal }: RestoreFileRequest): Promise<RestoredFile> {
  const { parts } = filePath(path);
  const { root } = await keptRecord(deps.archive, workspaceId, revision, 'restoring a file');
  const node = await fileNodeAt(deps.archive, workspaceId, path, parts, { revision, root });
  // Refused before the object is read (the write would refuse it after).
  if (node.size > deps.config.http.fileMaxBytes) throw new PayloadTooLargeError(deps.config.http.fileMaxBytes);
  const content = await deps.archive.objects.readObject(node.object);
  const written = await deps.io.write({ workspaceId, path, content, mode: node.mode, signal });
  return { workspaceId, path, revision, bytes: written.bytes, source: written.source };
}
