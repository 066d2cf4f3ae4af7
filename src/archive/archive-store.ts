/**
 * The archive on disk (see archive-paths.ts for the layout): committed revisions, their
 * manifests, temporary revisions, and the `current` pointer, flipped atomically by rename.
 * Every temporary a commit writes is named here (through archive-paths.ts), removed again when
 * its step fails, and listed by `temps` for the litter GC when a killed process left it.
 */
import { lstat, mkdir, readFile, readdir, readlink, rename, rm, symlink, open } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { archivePaths, MANIFEST_SUFFIX, RECORD_SUFFIX, REVISION_ID_PATTERN, tempKindOf, type ArchivePaths, type ArchiveTempKind } from './archive-paths.js';
import { fsyncDir } from './fsync.js';
import { treeHashOf, type RevisionManifest } from './manifest.js';
import { BaseRoots } from './base-roots.js';
import { ObjectStore, type ObjectStoreOptions } from './object-store.js';
import { flattenTree } from './revision-reader.js';
import { parseRevisionRecord, type RevisionRecord } from './revision-record.js';
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
  /** Format 2's shared objects and trees. */
  readonly objects: ObjectStore;
  /** Baked bases' root trees (`.bases/`): roots of the objects GC, bases of first persists. */
  readonly bases: BaseRoots;

  constructor(
    readonly root: string,
    options: ObjectStoreOptions = {},
  ) {
    this.objects = new ObjectStore(root, options);
    this.bases = new BaseRoots(root);
  }

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
      const id = target.replace(/^revs\//, '').replace(RECORD_SUFFIX, '');
      return REVISION_ID_PATTERN.test(id) ? id : null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** Where `current` points and in which form (`revs/<id>.rev.json`: 2, `revs/<id>`: 1); null when absent or not a revision. */
  async currentLink(workspaceId: string): Promise<{ readonly revision: string; readonly format: 1 | 2 } | null> {
    let target: string;
    try {
      target = await readlink(this.paths(workspaceId).current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const format = target.endsWith(RECORD_SUFFIX) ? 2 : 1;
    const id = target.replace(/^revs\//, '').replace(RECORD_SUFFIX, '');
    return REVISION_ID_PATTERN.test(id) ? { revision: id, format } : null;
  }

  /** Points `current` at a committed revision: symlink to a temp name, rename over, fsync. */
  async flipCurrent(workspaceId: string, revision: string): Promise<void> {
    const paths = this.paths(workspaceId);
    const tmp = paths.currentTmp(nonce());
    const format = (await this.formatOf(workspaceId, revision)) ?? 1;
    await symlink(paths.currentTarget(revision, format), tmp).catch(typed('flip current', tmp));
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

  /**
   * The manifest of a revision: format 1's file, or for format 2 its trees listed as manifest
   * entries (every path, in walk order; reads every tree of the revision).
   */
  async readManifest(workspaceId: string, revision: string): Promise<RevisionManifest | null> {
    const record = await this.readRecord(workspaceId, revision);
    if (record) {
      const entries = await flattenTree(this.objects, record.root);
      const { format: _format, root: _root, scanStartedAt: _scan, entries: _count, ...meta } = record;
      return { format: 2, ...meta, treeHash: treeHashOf(entries), entries };
    }
    try {
      return JSON.parse(await readFile(this.paths(workspaceId).manifest(revision), 'utf8')) as RevisionManifest;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** A format 2 revision's record; null when the revision has none (format 1, or absent). */
  async readRecord(workspaceId: string, revision: string): Promise<RevisionRecord | null> {
    const file = this.paths(workspaceId).record(revision);
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw classifyStorageError(error, 'read revision record', file);
    }
    return parseRevisionRecord(bytes, file);
  }

  /** Writes a record durably (temporary file, fsync, rename, directory fsync): the step that makes a format 2 revision exist. */
  async writeRecord(record: RevisionRecord): Promise<void> {
    const paths = this.paths(record.workspaceId);
    const tmp = paths.recordTmp(record.revision, nonce());
    const handle = await open(tmp, 'wx', 0o600).catch(typed('write revision record', tmp));
    try {
      try {
        await handle.writeFile(JSON.stringify(record));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, paths.record(record.revision));
    } catch (error) {
      await rm(tmp, { force: true }).catch(() => undefined);
      typed('write revision record', tmp)(error);
    }
    await fsyncDir(paths.revs).catch(typed('fsync', paths.revs));
  }

  /**
   * What a provider restores a revision from (`importTree`): the record of a format 2 revision,
   * or the directory of a format 1 one.
   */
  async revisionSource(workspaceId: string, revision: string): Promise<string> {
    const paths = this.paths(workspaceId);
    return (await this.formatOf(workspaceId, revision)) === 2 ? paths.record(revision) : paths.revision(revision);
  }

  /** The format a committed revision is stored in; null when it is not a committed revision. */
  async formatOf(workspaceId: string, revision: string): Promise<1 | 2 | null> {
    const names = new Set(await this.#names(workspaceId));
    if (names.has(`${revision}${RECORD_SUFFIX}`)) return 2;
    return names.has(revision) && names.has(`${revision}${MANIFEST_SUFFIX}`) ? 1 : null;
  }

  /** Committed revision ids of both formats (format 1: directory and manifest; format 2: record), oldest first. */
  async revisions(workspaceId: string): Promise<string[]> {
    const names = await this.#names(workspaceId);
    const set = new Set(names);
    const ids = names.filter((n) => REVISION_ID_PATTERN.test(n) && set.has(`${n}${MANIFEST_SUFFIX}`));
    for (const n of names) if (n.endsWith(RECORD_SUFFIX) && REVISION_ID_PATTERN.test(n.slice(0, -RECORD_SUFFIX.length))) ids.push(n.slice(0, -RECORD_SUFFIX.length));
    return [...new Set(ids)].sort();
  }

  /** Revision ids of the workspace's format 2 records (committed or not yet attached), oldest first. */
  async records(workspaceId: string): Promise<string[]> {
    const ids = (await this.#names(workspaceId)).filter((n) => n.endsWith(RECORD_SUFFIX)).map((n) => n.slice(0, -RECORD_SUFFIX.length));
    return ids.filter((id) => REVISION_ID_PATTERN.test(id)).sort();
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

  /** Temporaries of the shared object store (`.store/tmp/`): objects and trees being written, or moved aside by the objects GC. */
  async storeTemps(): Promise<ArchiveTemp[]> {
    const dir = this.objects.tmpDir;
    return (await namesIn(dir))
      .filter((name) => tempKindOf('store', name) !== null)
      .sort()
      .map((name) => ({ kind: 'store' as const, name, path: path.join(dir, name) }));
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
      const record = await this.readRecord(workspaceId, revision).catch(() => null);
      const generation = record?.generation ?? (await this.readManifest(workspaceId, revision))?.generation ?? 0;
      if (generation > max) max = generation;
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

