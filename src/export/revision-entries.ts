/**
 * Every entry of a committed revision, of either format, as one stream a writer can consume
 * in order (a directory before what it holds, the first name of an inode before its other
 * names): format 2 from its trees and objects, format 1 by a walk of its directory by handles
 * (nothing followed). A file's content is opened on demand and must be read before the stream
 * resumes.
 */
import type { ObjectHandle, ObjectStore } from '../archive/object-store.js';
import { childRel, walkTree } from '../archive/tree-walk.js';
import type { ExportSource } from './export-source.js';

export interface RevisionEntry {
  /** Path below the revision's root (bytes, '/'-separated). */
  readonly rel: Buffer;
  readonly type: 'file' | 'dir' | 'symlink' | 'fifo';
  readonly mode: number;
  /** Content bytes (files; 0 otherwise). */
  readonly size: number;
  /** Modification time in ns (format 2 stores none for directories: 0). */
  readonly mtimeNs: bigint;
  /** Symlink target. */
  readonly target?: Buffer;
  /** A later name of a multiply-linked inode: the path of its first name in this stream. */
  readonly linkTo?: Buffer;
  /** Opens a file's content (files that are not `linkTo`). */
  readonly open?: () => Promise<ObjectHandle>;
}

// Format 2: depth first through the trees, each directory's entries in name order.
async function* recordEntries(store: ObjectStore, root: string): AsyncGenerator<RevisionEntry> {
  const firstNames = new Map<string, Buffer>();
  async function* visit(tree: string, rel: Buffer): AsyncGenerator<RevisionEntry> {
    for (const node of await store.readTree(tree)) {
      const path = childRel(rel, node.name);
      if (node.type === 'd') {
        yield { rel: path, type: 'dir', mode: node.mode, size: 0, mtimeNs: 0n };
        yield* visit(node.tree, path);
      } else if (node.type === 'l') {
        yield { rel: path, type: 'symlink', mode: 0o777, size: 0, mtimeNs: 0n, target: node.target };
      } else if (node.type === 'p') {
        yield { rel: path, type: 'fifo', mode: node.mode, size: 0, mtimeNs: node.mtimeNs };
      } else {
        const first = node.linkKey === undefined ? undefined : firstNames.get(node.linkKey);
        if (first) {
          yield { rel: path, type: 'file', mode: node.mode, size: 0, mtimeNs: node.mtimeNs, linkTo: first };
          continue;
        }
        if (node.linkKey !== undefined) firstNames.set(node.linkKey, path);
        yield { rel: path, type: 'file', mode: node.mode, size: node.size, mtimeNs: node.mtimeNs, open: () => store.openObject(node.object) };
      }
    }
  }
  yield* visit(root, Buffer.alloc(0));
}

// Format 1: the revision directory walked by handles (a directory's entries, then each subdirectory's).
async function* directoryEntries(dir: string): AsyncGenerator<RevisionEntry> {
  const firstNames = new Map<number, Buffer>();
  for await (const entry of walkTree(dir)) {
    const base = { rel: entry.rel, mode: entry.mode, mtimeNs: entry.mtimeNs };
    if (entry.type === 'dir') yield { ...base, type: 'dir', size: 0 };
    else if (entry.type === 'symlink') yield { ...base, type: 'symlink', size: 0, target: entry.target! };
    else if (entry.type === 'fifo') yield { ...base, type: 'fifo', size: 0 };
    else if (entry.type === 'file') {
      const first = entry.nlink > 1 ? firstNames.get(entry.ino) : undefined;
      if (first) {
        yield { ...base, type: 'file', size: 0, linkTo: first };
        continue;
      }
      // Format 1 shares inodes across revisions: only names met within this walk are links here.
      if (entry.nlink > 1) firstNames.set(entry.ino, entry.rel);
      yield { ...base, type: 'file', size: entry.size, open: () => entry.open() };
    }
    // Sockets and devices are never archived; a stray one is not exported either.
  }
}

/** The entries of a committed revision. */
export function revisionEntries(store: ObjectStore, source: ExportSource): AsyncGenerator<RevisionEntry> {
  return source.format === 2 ? recordEntries(store, source.root) : directoryEntries(source.dir);
}
