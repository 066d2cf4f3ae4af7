/**
 * `rm -rf` for trees a sandbox may still be changing, by directory handles: every directory is
 * opened beneath its parent with `O_NOFOLLOW` and emptied through its handle, and `unlink` /
 * `rmdir` never follow a final symlink, so a directory swapped for a symlink mid-removal makes
 * one call fail instead of deleting what the link points at (the classic `remove_dir_all` race,
 * CVE-2022-21658). Node's `fs.rm({ recursive })` re-resolves path strings and is not safe here.
 */
import path from 'node:path';
import { DirHandle } from './dir-handle.js';
import { mapBounded } from '../lib/map-bounded.js';
import { errnoOf } from '../errors/classify-storage-error.js';

/** Unlinks in flight at once within one directory. */
const REMOVE_CONCURRENCY = 16;
/**
 * Rounds of emptying a directory that keeps getting new entries (a process still writing into
 * it) before giving up with `ENOTEMPTY`.
 */
const MAX_ROUNDS = 8;

// Empties an open directory.
async function emptyDirectory(dir: DirHandle): Promise<void> {
  await mapBounded(await dir.names(), REMOVE_CONCURRENCY, (name) => removeEntry(dir, name));
}

/** Removes `name` beneath `parent` and everything below it; a missing entry is not an error. */
export async function removeEntry(parent: DirHandle, name: Buffer): Promise<void> {
  for (let round = 0; ; round++) {
    try {
      await parent.unlink(name);
      return;
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ENOENT') return;
      // Linux answers EISDIR for a directory (POSIX allows EPERM).
      if (code !== 'EISDIR' && code !== 'EPERM') throw error;
    }
    let dir: DirHandle;
    try {
      dir = await parent.openDir(name);
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ENOENT') return;
      // Replaced by a non-directory since the unlink: unlink it in the next round.
      if ((code === 'ENOTDIR' || code === 'ELOOP') && round < MAX_ROUNDS) continue;
      throw error;
    }
    try {
      await emptyDirectory(dir);
    } finally {
      await dir.close();
    }
    try {
      await parent.rmdir(name);
      return;
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ENOENT') return;
      // Something was added meanwhile, or the name is now something else: another round.
      if ((code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR') && round < MAX_ROUNDS) continue;
      throw error;
    }
  }
}

/**
 * Removes the tree at `target`, whose parent directories the fleet controls (the last component
 * may be anything a sandbox made). A missing target is not an error.
 */
export async function removeTree(target: string): Promise<void> {
  let parent: DirHandle;
  try {
    parent = await DirHandle.open(path.dirname(target));
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return;
    throw error;
  }
  try {
    await removeEntry(parent, Buffer.from(path.basename(target)));
  } finally {
    await parent.close();
  }
}
