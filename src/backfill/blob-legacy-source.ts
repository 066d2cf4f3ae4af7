/**
 * The flat blob legacy store: `{legacyRoot}/{workspaceId}/` holds one regular file per
 * workspace file, named by its path with '/' replaced by '∕' (blob-name.ts). Symlinks, special
 * files, subdirectories and names that do not decode to a safe relative path are skipped and
 * reported; nothing is ever followed (a symlinked workspace directory is skipped as a whole).
 */
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { absoluteBytes, encodePath } from '../archive/tree-walk.js';
import { checkRelativePath } from '../providers/local/safe-path.js';
import { WORKSPACE_ID_PATTERN, WorkspaceId, parsePayload } from '../queues/payload.js';
import { decodeBlobName, encodeBlobName } from './blob-name.js';
import { cachedListing } from './cached-listing.js';
import { FsLegacyWorkspace } from './fs-legacy-workspace.js';
import { pageOf, type LegacyFile, type LegacyListing, type LegacySource, type LegacyWorkspace, type SkippedEntry, type WorkspacePage } from './legacy-source.js';
import { readRegularFile } from './open-regular-file.js';

// lstat that returns null for a missing path.
async function lstatOrNull(file: string | Buffer) {
  try {
    return await lstat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Reads one workspace directory of the blob store into files and skipped entries. */
async function listBlobDirectory(dir: string): Promise<LegacyListing> {
  const files: LegacyFile[] = [];
  const skipped: SkippedEntry[] = [];
  for (const name of await readdir(dir, { encoding: 'buffer' })) {
    const stats = await lstatOrNull(absoluteBytes(dir, name));
    if (!stats) continue;
    const shown = encodePath(name);
    if (stats.isSymbolicLink()) skipped.push({ name: shown, reason: 'symlink' });
    else if (!stats.isFile()) skipped.push({ name: shown, reason: 'not-a-file', detail: stats.isDirectory() ? 'directory' : 'special file' });
    else {
      const decoded = decodeBlobName(name);
      if ('problem' in decoded) skipped.push({ name: shown, reason: 'hostile-name', detail: decoded.problem });
      else files.push({ rel: decoded.rel, path: encodePath(decoded.rel), size: stats.size, mode: stats.mode & 0o777, mtimeMs: stats.mtimeMs });
    }
  }
  files.sort((a, b) => Buffer.compare(a.rel, b.rel));
  return { files, skipped };
}

// Workspace directories of the store (Dirent types are lstat's: a symlinked directory is not one).
async function workspaceDirectories(root: string): Promise<string[]> {
  try {
    return (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory() && WORKSPACE_ID_PATTERN.test(e.name)).map((e) => e.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

export class BlobLegacySource implements LegacySource {
  readonly name = 'blob' as const;
  readonly #ids: (fresh: boolean) => Promise<readonly string[]>;

  constructor(readonly root: string) {
    this.#ids = cachedListing(() => workspaceDirectories(root));
  }

  async listWorkspaces({ after, limit }: { after: string | null; limit: number }): Promise<WorkspacePage> {
    return pageOf(await this.#ids(after === null), after, limit);
  }

  async openWorkspace(workspaceId: string): Promise<LegacyWorkspace | null> {
    const dir = this.#dir(workspaceId);
    const stats = await lstatOrNull(dir);
    if (!stats) return null;
    const refused = !stats.isDirectory();
    return new FsLegacyWorkspace({
      workspaceId,
      origin: dir,
      list: async () =>
        refused
          ? { files: [], skipped: [{ name: '.', reason: stats.isSymbolicLink() ? 'symlink' : 'not-a-file', detail: `${dir} is not a real directory` }] }
          : listBlobDirectory(dir),
      locate: (file) => absoluteBytes(dir, encodeBlobName(file.rel)),
    });
  }

  /**
   * Reads one file directly (the app-side dual read): `null` when the workspace or the file is
   * absent, or when either is a symlink or not a regular file.
   */
  async readFile(workspaceId: string, relative: string): Promise<Buffer | null> {
    checkRelativePath('path', relative);
    const dir = this.#dir(workspaceId);
    if (!(await lstatOrNull(dir))?.isDirectory()) return null;
    return readRegularFile(absoluteBytes(dir, encodeBlobName(relative)));
  }

  #dir(workspaceId: string): string {
    return path.join(this.root, parsePayload('workspace', WorkspaceId, workspaceId));
  }
}
