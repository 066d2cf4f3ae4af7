/**
 * Bases in the archive: `{archiveRoot}/.bases/{snapshotId}.json` names the root tree of a baked
 * base's files in the object store (written by the bake, bake/archive-base.ts). A workspace
 * made from that base persists its first revision against it (persist-to-store.ts): files the
 * base already holds are referenced, not read, and its changed directories are stored as
 * patches of the base's trees. Each record is a root of the objects GC until the base is
 * retired; a missing or unreadable one only costs the first persist its shortcut.
 */
import { open, readdir, readFile, rename, rm, mkdir } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { errnoOf } from '../errors/classify-storage-error.js';
import { SNAPSHOT_ID_PATTERN } from '../queues/payload.js';
import { fsyncDir } from './fsync.js';
import { OBJECT_ID_PATTERN } from './tree-object.js';

export const BASES_DIR = '.bases';
const SUFFIX = '.json';

export const BaseRoot = z
  .object({
    format: z.literal(1),
    snapshotId: z.string().regex(SNAPSHOT_ID_PATTERN),
    root: z.string().regex(OBJECT_ID_PATTERN),
    /** When the walk of the base's files began (ns): files changed since are read again. */
    scanStartedAt: z.string().regex(/^\d{1,25}$/),
    files: z.number().int().min(0),
    bytes: z.number().int().min(0),
    entries: z.number().int().min(0),
    createdAt: z.string(),
  })
  .strict();
export type BaseRoot = z.infer<typeof BaseRoot>;

// A snapshot id is validated before it becomes a path (it comes from Redis or a job).
function checked(snapshotId: string): string {
  if (!SNAPSHOT_ID_PATTERN.test(snapshotId)) throw new TypeError(`not a snapshot id: ${JSON.stringify(snapshotId)}`);
  return snapshotId;
}

export class BaseRoots {
  readonly dir: string;

  constructor(archiveRoot: string) {
    this.dir = path.join(archiveRoot, BASES_DIR);
  }

  #file(snapshotId: string): string {
    return path.join(this.dir, `${checked(snapshotId)}${SUFFIX}`);
  }

  /** Writes the record durably (temporary, fsync, rename, fsync of the directory). */
  async put(record: BaseRoot): Promise<void> {
    const parsed = BaseRoot.parse(record);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = path.join(this.dir, `.tmp-${randomBytes(4).toString('hex')}`);
    try {
      const handle = await open(tmp, 'wx', 0o600);
      try {
        await handle.writeFile(JSON.stringify(parsed));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, this.#file(parsed.snapshotId));
    } finally {
      await rm(tmp, { force: true });
    }
    await fsyncDir(this.dir);
  }

  /** The record of a base; null when there is none. Throws when it exists but is not a record (GC must not read past damage). */
  async read(snapshotId: string): Promise<BaseRoot | null> {
    let raw: string;
    try {
      raw = await readFile(this.#file(snapshotId), 'utf8');
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return null;
      throw error;
    }
    const parsed = BaseRoot.safeParse(JSON.parse(raw) as unknown);
    if (!parsed.success || parsed.data.snapshotId !== snapshotId) throw new TypeError(`${this.#file(snapshotId)} is not a base record`);
    return parsed.data;
  }

  /** Snapshot ids of every record (temporaries and foreign names are not). */
  async list(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return [];
      throw error;
    }
    return names
      .filter((n) => n.endsWith(SUFFIX))
      .map((n) => n.slice(0, -SUFFIX.length))
      .filter((id) => SNAPSHOT_ID_PATTERN.test(id))
      .sort();
  }

  /** Forgets a base (retired): its trees and objects become collectable unless a revision shares them. */
  async remove(snapshotId: string): Promise<void> {
    await rm(this.#file(snapshotId), { force: true });
    await fsyncDir(this.dir).catch(() => undefined);
  }
}
