/**
 * Archives `fleet workspace reset` moved aside: `{archiveRoot}/.reset/{ws}-{time}/`, the
 * workspace's archive directory as it was. The fleet never deletes them (an operator can still
 * recover one), so the format 2 records inside stay roots of the objects GC: their objects and
 * trees live in the shared store, not in the directory that was moved. Read through directory
 * handles, so nothing below `.reset` is followed when it is a symlink.
 */
import { constants } from 'node:fs';
import path from 'node:path';
import { errnoOf } from '../errors/classify-storage-error.js';
import { WORKSPACE_ID_PATTERN } from '../queues/payload.js';
import { DirHandle } from '../tree/dir-handle.js';
import { RECORD_SUFFIX, REVISION_ID_PATTERN } from './archive-paths.js';
import { parseRevisionRecord, type RevisionRecord } from './revision-record.js';

/** The directory under the archive root holding archives moved aside by resets. */
export const RESET_DIR = '.reset';
// `{ws}-{ISO time without : and .}`, as `resetAsidePath` names them.
const ASIDE_NAME = new RegExp(`^${WORKSPACE_ID_PATTERN.source.slice(1, -1)}-\\d{4}-\\d{2}-\\d{2}T\\d{9}Z$`);
const REVS = Buffer.from('revs');

/** Where a reset at `at` moves `workspaceId`'s archive directory. */
export function resetAsidePath(archiveRoot: string, workspaceId: string, at: Date): string {
  return path.join(archiveRoot, RESET_DIR, `${workspaceId}-${at.toISOString().replace(/[:.]/g, '')}`);
}

/** One format 2 record of an archive moved aside. */
export interface AsideRecord {
  /** The moved directory's name (`{ws}-{time}`). */
  readonly aside: string;
  readonly revision: string;
}

/** Every format 2 record below `.reset/`, sorted; names that are not the fleet's are ignored. */
export async function asideRecords(archiveRoot: string): Promise<AsideRecord[]> {
  const top = await openOrNull(() => DirHandle.open(path.join(archiveRoot, RESET_DIR)));
  if (!top) return [];
  const out: AsideRecord[] = [];
  try {
    for (const name of await top.names()) {
      const aside = name.toString('latin1');
      if (!ASIDE_NAME.test(aside)) continue;
      const revs = await inside(top, name);
      if (!revs) continue;
      try {
        for (const entry of await revs.names()) {
          const file = entry.toString('latin1');
          const revision = file.slice(0, -RECORD_SUFFIX.length);
          if (file.endsWith(RECORD_SUFFIX) && REVISION_ID_PATTERN.test(revision)) out.push({ aside, revision });
        }
      } finally {
        await revs.close();
      }
    }
  } finally {
    await top.close();
  }
  return out;
}

/** Reads one aside record; null when it is gone. Throws `RevisionRecordError` when it does not parse. */
export async function readAsideRecord(archiveRoot: string, { aside, revision }: AsideRecord): Promise<RevisionRecord | null> {
  const top = await openOrNull(() => DirHandle.open(path.join(archiveRoot, RESET_DIR)));
  if (!top) return null;
  try {
    const revs = await inside(top, Buffer.from(aside));
    if (!revs) return null;
    try {
      const name = Buffer.from(`${revision}${RECORD_SUFFIX}`);
      const file = await openOrNull(() => revs.openFile(name, constants.O_RDONLY | constants.O_NOFOLLOW));
      if (!file) return null;
      try {
        return parseRevisionRecord(await file.readFile(), path.join(archiveRoot, RESET_DIR, aside, 'revs', name.toString()));
      } finally {
        await file.close();
      }
    } finally {
      await revs.close();
    }
  } finally {
    await top.close();
  }
}

// `{aside}/revs` below `.reset`, or null when either is missing or not a directory.
async function inside(top: DirHandle, aside: Buffer): Promise<DirHandle | null> {
  const dir = await openOrNull(() => top.openDir(aside));
  if (!dir) return null;
  try {
    return await openOrNull(() => dir.openDir(REVS));
  } finally {
    await dir.close();
  }
}

// The opened thing, or null when it does not exist or is not what was asked for (a symlink, a file).
async function openOrNull<T>(open: () => Promise<T>): Promise<T | null> {
  try {
    return await open();
  } catch (error) {
    if (['ENOENT', 'ENOTDIR', 'ELOOP'].includes(errnoOf(error) ?? '')) return null;
    throw error;
  }
}
