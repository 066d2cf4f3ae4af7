/**
 * Restores a format 2 revision into an empty directory (a private staging tree): every
 * directory, file (mode and mtime), symlink and FIFO of its trees, names of one inode as hard
 * links of one inode, owned by `owner` when given (set while each entry is made: no second walk).
 * Files are copies of their objects (reflinks where the filesystem has them,
 * holes kept), never hard links into the store: an in-place write in a live tree must never
 * change history.
 */
import { constants } from 'node:fs';
import { chmod, copyFile, lchown, lstat, stat, utimes, type FileHandle } from 'node:fs/promises';
import { errnoOf } from '../errors/classify-storage-error.js';
import { StorageIoError } from '../errors/storage-io-error.js';
import { TaskPool } from '../lib/task-pool.js';
import { copyFileData, isSparse } from '../tree/copy-file-data.js';
import { chownDir } from '../tree/chown-tree.js';
import { CREATE_FILE_FLAGS, type DirHandle } from '../tree/dir-handle.js';
import { nodeTime, setFileTime } from '../tree/file-times.js';
import { makeFifo } from '../tree/make-fifo.js';
import type { ObjectStore } from './object-store.js';
import type { FileNode } from './tree-object.js';
import { childRel } from './tree-walk.js';

/** Files copied at once. */
const COPY_CONCURRENCY = 16;
/**
 * Files up to this size are restored by one `copyFile` and their owner, mode and time set by
 * name (four thread-pool round trips, where a read and a write through handles took eight);
 * larger ones are checked for holes first (a sparse object is copied hole by hole).
 */
export const SMALL_COPY_BYTES = 256 * 1024;

export interface MaterializeOptions {
  /** PATH for `mkfifo`. */
  readonly systemPath: string;
  readonly signal: AbortSignal;
  /** Called after each file with the number of files made so far (progress). */
  readonly onFile?: (files: number) => void;
  /** Owner of everything made (the workspace's uid under namespaces isolation); else the process's. */
  readonly owner?: { readonly uid: number; readonly gid: number };
}

export interface Materialized {
  readonly files: number;
  readonly directories: number;
  readonly bytes: number;
}

export async function materializeRevision(store: ObjectStore, root: string, dest: DirHandle, options: MaterializeOptions): Promise<Materialized> {
  const { owner } = options;
  const pool = new TaskPool(COPY_CONCURRENCY, options.signal);
  const linked = new Map<string, Promise<Buffer>>();
  const counts = { files: 0, directories: 0, bytes: 0 };

  // One file: a copy of its object (or a link to the first name of its inode), then mode and time.
  const file = async (dir: DirHandle, node: FileNode, rel: Buffer): Promise<void> => {
    const first = node.linkKey === undefined ? undefined : linked.get(node.linkKey);
    if (first) {
      await dir.linkPath(dest.privatePath(await first), node.name);
      return;
    }
    let settle: { resolve: (rel: Buffer) => void; reject: (error: unknown) => void } | undefined;
    if (node.linkKey !== undefined) {
      const made = new Promise<Buffer>((resolve, reject) => (settle = { resolve, reject }));
      made.catch(() => undefined);
      linked.set(node.linkKey, made);
    }
    try {
      await copyObjectInto(store, dir, node, { owner, signal: options.signal });
    } catch (error) {
      settle?.reject(error);
      throw error;
    }
    counts.files += 1;
    counts.bytes += node.size;
    options.onFile?.(counts.files);
    settle?.resolve(rel);
  };

  const directory = async (dir: DirHandle, tree: string, rel: Buffer): Promise<void> => {
    const tasks: Promise<void>[] = [];
    const subdirs: { name: Buffer; tree: string; mode: number }[] = [];
    try {
      for (const node of await store.readTree(tree)) {
        pool.check();
        const childPath = childRel(rel, node.name);
        if (node.type === 'd') {
          await dir.mkdir(node.name, 0o700);
          subdirs.push(node);
        } else if (node.type === 'f') {
          await pool.schedule(tasks, () => file(dir, node, childPath));
        } else if (node.type === 'l') {
          await dir.symlink(node.target, node.name);
          if (owner) await lchown(dir.entry(node.name), owner.uid, owner.gid);
        } else {
          await makeFifo(dir, node.name, node.mode, options.systemPath, options.signal);
          if (owner) await lchown(dir.entry(node.name), owner.uid, owner.gid);
          await utimes(dir.entry(node.name), nodeTime(node.mtimeNs), nodeTime(node.mtimeNs));
        }
      }
      for (const sub of subdirs) {
        const child = await dir.openDir(sub.name);
        try {
          await directory(child, sub.tree, childRel(rel, sub.name));
          if (owner) await chownDir(child, owner.uid, owner.gid);
          await child.chmod(sub.mode);
        } finally {
          await child.close();
        }
        counts.directories += 1;
      }
    } finally {
      await Promise.allSettled(tasks);
    }
    pool.check();
  };

  try {
    await directory(dest, root, Buffer.alloc(0));
    await pool.drain();
    // The root last, like every directory: it stays the fleet's while its contents are written.
    if (owner) await chownDir(dest, owner.uid, owner.gid);
  } catch (error) {
    await pool.settle();
    throw error;
  }
  return counts;
}

/**
 * The object of `node` as a new file `node.name` beneath `dir` (a directory only the fleet can
 * reach), with its owner, mode and mtime: a copy (a reflink where the filesystem has them), holes
 * kept. An object of another size than the tree says fails with `StorageIoError`.
 */
// A copy that failed because the object has no file of its own: true (it is read from a pack, or fails there as missing).
function packedIfMissing(error: unknown): boolean {
  if (errnoOf(error) === 'ENOENT') return true;
  throw error;
}

export async function copyObjectInto(
  store: ObjectStore,
  dir: DirHandle,
  node: FileNode,
  { owner, signal }: { readonly owner?: { readonly uid: number; readonly gid: number } | undefined; readonly signal: AbortSignal },
): Promise<void> {
  const object = store.objectPath(node.object);
  // Objects this small are written whole (object-store.ts), never sparse: one copyFile (a
  // reflink where the filesystem has them), then owner, mode and time by the new name, which
  // only the fleet can reach (the staging tree is outside every sandbox's view until it is
  // swapped in), and a look at its size: a short object fails the restore.
  if (node.size <= SMALL_COPY_BYTES) {
    const made = dir.entry(node.name);
    if (store.packs.find(node.object) || (await copyFile(object, made, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE).then(() => false, packedIfMissing))) {
      // In a pack: its bytes are written into the new file.
      const content = await store.readObject(node.object);
      const output = await dir.openFile(node.name, CREATE_FILE_FLAGS, 0o600);
      try {
        for (let at = 0; at < content.length; ) at += (await output.write(content, at, content.length - at, at)).bytesWritten;
        await finishFile(output, node, owner);
      } finally {
        await output.close();
      }
      if (content.length !== node.size) throw new StorageIoError({ operation: 'restore read', path: object, errno: 'EIO' }, `object holds ${content.length} bytes, its tree says ${node.size}`);
      return;
    }
    if (owner) await lchown(made, owner.uid, owner.gid);
    await chmod(made, node.mode);
    const time = nodeTime(node.mtimeNs);
    await utimes(made, time, time);
    const { size } = await lstat(made);
    if (size !== node.size) throw new StorageIoError({ operation: 'restore read', path: object, errno: 'EIO' }, `object holds ${size} bytes, its tree says ${node.size}`);
    return;
  }
  // Copied by the kernel, whatever its length: an object of another size than its tree says fails here.
  const stats = await stat(object, { bigint: true });
  if (stats.size !== BigInt(node.size)) throw new StorageIoError({ operation: 'restore read', path: object, errno: 'EIO' }, `object holds ${stats.size} bytes, its tree says ${node.size}`);
  if (isSparse(stats)) {
    const input = await store.openObject(node.object);
    const output = await dir.openFile(node.name, CREATE_FILE_FLAGS, 0o600);
    try {
      await copyFileData(input, output, node.size, true, signal);
      await finishFile(output, node, owner);
    } finally {
      await input.close();
      await output.close();
    }
    return;
  }
  // Exclusive (nothing is ever written through an existing name); a reflink where the filesystem has them.
  await copyFile(object, dir.entry(node.name), constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
  const output = await dir.openFile(node.name, constants.O_WRONLY | constants.O_NOFOLLOW);
  try {
    await finishFile(output, node, owner);
  } finally {
    await output.close();
  }
}

// Owner first (a chown clears setuid/setgid bits), then mode, then time (the chmod would not move it, but keep the order fixed).
async function finishFile(output: FileHandle, node: FileNode, owner: { readonly uid: number; readonly gid: number } | undefined): Promise<void> {
  if (owner) await output.chown(owner.uid, owner.gid);
  await output.chmod(node.mode);
  await setFileTime(output, node.mtimeNs);
}
