/**
 * The archive on disk (see archive-paths.ts for the layout): committed revisions, their
 * manifests, temporary revisions, and the `current` pointer, flipped atomically by rename.
 * Every temporary a commit writes is named here (through archive-paths.ts), removed again when
 * its step fails, and listed by `temps` for the litter GC when a killed process left it.
 */
import { lstat, mkdir, readFile, readdir, readlink, rename, rm, symlink, open } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { archivePaths, MANIFEST_SUFFIX, REVISION_ID_PATTERN, tempKindOf, type ArchivePaths, type ArchiveTempKind } from './archive-paths.js';
import { fsyncDir } from './fsync.js';
import type { RevisionManifest } from './manifest.js';
import { classifyStorageError } from '../errors/classify-storage-error.js';

// Rethrows a filesystem error of `operation` on `path` as a typed storage error.
const typed =
  (operation: string, path: string) =>
  (error: unknown): never => {
    throw classifyStorageError(error, operation, path);
  };

export interface RevisionSummary {
  readonly revision: string;
  readonly manifest: RevisionManifest | null;
}

/** A temporary file, link or directory of one workspace's archive (see archive-paths.ts). */
export interface ArchiveTemp {
  readonly kind: ArchiveTempKind;
  readonly name: string;
  readonly path: string;
}

// Random hex that keeps two writers of the same target from sharing a temporary name.
const nonce = () => randomBytes(4).toString('hex');

export class ArchiveStore {
  constructor(readonly root: string) {}

  paths(workspaceId: string): ArchivePaths {
    return archivePaths(this.root, workspaceId);
  }

  /** Creates the workspace's archive directories. */
  async ensure(workspaceId: string): Promise<ArchivePaths> {
    const paths = this.paths(workspaceId);
    await mkdir(paths.revs, { recursive: true, mode: 0o700 }).catch(typed('create archive directory', paths.revs));
    return paths;
  }

  /** The revision `current` points at, or null. */
  async current(workspaceId: string): Promise<string | null> {
    try {
      const target = await readlink(this.paths(workspaceId).current);
      const id = target.replace(/^revs\//, '');
      return REVISION_ID_PATTERN.test(id) ? id : null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** Points `current` at a committed revision: symlink to a temp name, rename over, fsync. */
  async flipCurrent(workspaceId: string, revision: string): Promise<void> {
    const paths = this.paths(workspaceId);
    const tmp = paths.currentTmp(nonce());
    await symlink(paths.currentTarget(revision), tmp).catch(typed('flip current', tmp));
    try {
      await rename(tmp, paths.current);
    } catch (error) {
      await rm(tmp, { force: true }).catch(() => undefined);
      typed('flip current', paths.current)(error);
    }
    await fsyncDir(paths.dir).catch(typed('fsync', paths.dir));
  }

  /** Writes a manifest durably (temp file, fsync, rename); a failed write removes its temp file. */
  async writeManifest(workspaceId: string, manifest: RevisionManifest): Promise<void> {
    const paths = this.paths(workspaceId);
    const tmp = paths.manifestTmp(manifest.revision, nonce());
    const handle = await open(tmp, 'wx', 0o600).catch(typed('write manifest', tmp));
    try {
      try {
        await handle.writeFile(JSON.stringify(manifest));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, paths.manifest(manifest.revision));
    } catch (error) {
      await rm(tmp, { force: true }).catch(() => undefined);
      typed('write manifest', tmp)(error);
    }
  }

  /**
   * Renames a finished temporary revision into place and fsyncs the directory. When the rename
   * fails, the manifest written for it goes too (a manifest without its revision is litter no
   * listing would show).
   */
  async commit(workspaceId: string, revision: string): Promise<void> {
    const paths = this.paths(workspaceId);
    try {
      await rename(paths.tmp(revision), paths.revision(revision));
    } catch (error) {
      await rm(paths.manifest(revision), { force: true }).catch(() => undefined);
      typed('commit revision', paths.revision(revision))(error);
    }
    await fsyncDir(paths.revs).catch(typed('fsync', paths.revs));
  }

  async readManifest(workspaceId: string, revision: string): Promise<RevisionManifest | null> {
    try {
      return JSON.parse(await readFile(this.paths(workspaceId).manifest(revision), 'utf8')) as RevisionManifest;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** Committed revision ids (directory and manifest present), oldest first. */
  async revisions(workspaceId: string): Promise<string[]> {
    const names = await this.#names(workspaceId);
    const set = new Set(names);
    return names.filter((n) => REVISION_ID_PATTERN.test(n) && set.has(`${n}${MANIFEST_SUFFIX}`)).sort();
  }

  /** Temporary revision directories (litter of interrupted persists, or in progress). */
  async temporaries(workspaceId: string): Promise<string[]> {
    return (await this.temps(workspaceId)).filter((t) => t.kind === 'revision').map((t) => t.name);
  }

  /**
   * Every temporary of a workspace: revisions, manifests and `current` links being written, or
   * left behind by a process that died (or, for a revision, a failed step that could not remove
   * it). Sorted by path.
   */
  async temps(workspaceId: string): Promise<ArchiveTemp[]> {
    const paths = this.paths(workspaceId);
    const found: ArchiveTemp[] = [];
    for (const [where, dir] of [['revs', paths.revs], ['dir', paths.dir]] as const) {
      for (const name of await namesIn(dir)) {
        const kind = tempKindOf(where, name);
        if (kind) found.push({ kind, name, path: path.join(dir, name) });
      }
    }
    return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Revision directories without a manifest (renamed but interrupted) — litter too. */
  async unmanifested(workspaceId: string): Promise<string[]> {
    const names = await this.#names(workspaceId);
    const set = new Set(names);
    return names.filter((n) => REVISION_ID_PATTERN.test(n) && !set.has(`${n}${MANIFEST_SUFFIX}`));
  }

  /** Highest generation recorded by any committed revision (0 if none). */
  async maxGeneration(workspaceId: string): Promise<number> {
    let max = 0;
    for (const revision of await this.revisions(workspaceId)) {
      const manifest = await this.readManifest(workspaceId, revision);
      if (manifest && manifest.generation > max) max = manifest.generation;
    }
    return max;
  }

  /** Workspace ids present in the archive. */
  async workspaces(): Promise<string[]> {
    try {
      return (await readdir(this.root)).filter((n) => /^[A-Za-z0-9_-]{1,128}$/.test(n)).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  /** Age in ms of a path's own mtime, never a link target's (for litter grace periods). */
  async ageMs(file: string, now = Date.now()): Promise<number> {
    return now - (await lstat(file)).mtimeMs;
  }

  async #names(workspaceId: string): Promise<string[]> {
    return namesIn(this.paths(workspaceId).revs);
  }
}

// Names in a directory; none when it does not exist.
async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Ensures a directory exists. */
export async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
}

