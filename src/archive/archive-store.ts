/**
 * The archive on disk (see archive-paths.ts for the layout): committed revisions, their
 * manifests, temporary revisions, and the `current` pointer, flipped atomically by rename.
 */
import { mkdir, readFile, readdir, readlink, rename, rm, stat, symlink, open } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { archivePaths, MANIFEST_SUFFIX, REVISION_ID_PATTERN, TMP_PREFIX, type ArchivePaths } from './archive-paths.js';
import { fsyncDir } from './fsync.js';
import type { RevisionManifest } from './manifest.js';

export interface RevisionSummary {
  readonly revision: string;
  readonly manifest: RevisionManifest | null;
}

export class ArchiveStore {
  constructor(readonly root: string) {}

  paths(workspaceId: string): ArchivePaths {
    return archivePaths(this.root, workspaceId);
  }

  /** Creates the workspace's archive directories. */
  async ensure(workspaceId: string): Promise<ArchivePaths> {
    const paths = this.paths(workspaceId);
    await mkdir(paths.revs, { recursive: true, mode: 0o700 });
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
    const tmp = `${paths.current}.tmp-${randomBytes(4).toString('hex')}`;
    await symlink(paths.currentTarget(revision), tmp);
    try {
      await rename(tmp, paths.current);
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
    await fsyncDir(paths.dir);
  }

  /** Writes a manifest durably (temp file, fsync, rename). */
  async writeManifest(workspaceId: string, manifest: RevisionManifest): Promise<void> {
    const target = this.paths(workspaceId).manifest(manifest.revision);
    const tmp = `${target}.tmp-${randomBytes(4).toString('hex')}`;
    const handle = await open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(JSON.stringify(manifest));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, target);
  }

  /** Renames a finished temporary revision into place and fsyncs the directory. */
  async commit(workspaceId: string, revision: string): Promise<void> {
    const paths = this.paths(workspaceId);
    await rename(paths.tmp(revision), paths.revision(revision));
    await fsyncDir(paths.revs);
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
    return (await this.#names(workspaceId)).filter((n) => n.startsWith(TMP_PREFIX)).sort();
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

  /** Age in ms of a path's mtime (for litter grace periods). */
  async ageMs(path: string, now = Date.now()): Promise<number> {
    return now - (await stat(path)).mtimeMs;
  }

  async #names(workspaceId: string): Promise<string[]> {
    try {
      return await readdir(this.paths(workspaceId).revs);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }
}

/** Ensures a directory exists. */
export async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
}

