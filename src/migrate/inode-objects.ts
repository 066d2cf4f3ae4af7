/**
 * The object ids of format 1 files a migration has read, by inode: format 1 keeps an unchanged
 * file as a hard link to the previous revision's, so the same inode appears in many revisions
 * and its content is read once per run. Keyed by device, inode, size, mtime and ctime (a freed
 * and reused inode number has another ctime). Only a hint: the converter accepts an id from here
 * only when the revision's own manifest names that very content for the path, and the object is
 * still in the store.
 */
import type { BigIntStats } from 'node:fs';

/** Inodes remembered at most (about 150 bytes each); the oldest are forgotten first. */
const MAX_INODES = 500_000;

const keyOf = (st: BigIntStats) => `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;

export class InodeObjects {
  readonly #ids = new Map<string, string>();

  get(st: BigIntStats): string | undefined {
    return this.#ids.get(keyOf(st));
  }

  set(st: BigIntStats, id: string): void {
    if (this.#ids.size >= MAX_INODES) this.#ids.delete(this.#ids.keys().next().value!);
    this.#ids.set(keyOf(st), id);
  }
}
