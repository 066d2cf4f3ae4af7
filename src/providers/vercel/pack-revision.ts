/**
 * Packs a format 2 revision for `importTree` straight from the archive: a gzip'd pax tar of its
 * trees and objects, entry for entry what `tar -czf - --format=posix --hard-dereference` makes of
 * the revision materialised into a fresh directory (pack-tree.ts), without writing every file
 * to the host's disk and reading it back (at 100,000 files, most of a Vercel restore's host time).
 *
 * Each entry as materializeRevision would have made it and GNU tar recorded it:
 * - the root `./` and every directory with the time of packing (materialised directories keep the
 *   time they were made), the root 0700 (a private staging directory), others their mode;
 * - a file with its mode, size and content and the modification time Node would have set
 *   (`storedMtimeNs`, given to nanoseconds in a pax record, as GNU tar records it); every name of
 *   a hard-linked inode as a file of its own (`--hard-dereference`);
 * - a symlink with its target, a FIFO with its mode and time.
 *
 * tar-stream's headers are strings, so a name or a symlink target that is not valid UTF-8 (which a
 * sandbox may create) cannot be written exactly: the packer then returns `null` and the caller
 * packs the materialised tree with the host's `tar`, as before. So does a time before 1970.
 * An object shorter or longer than its tree says fails the restore (`StorageIoError`).
 */
import { once } from 'node:events';
import { setImmediate } from 'node:timers/promises';
import { createGzip } from 'node:zlib';
import { pack as tarPack } from 'tar-stream';
import type { ObjectStore } from '../../archive/object-store.js';
import type { TreeNode } from '../../archive/tree-object.js';
import { coalescer, NotRepresentable, readSmallObject, tarText as text, tarTimed as timed, type TarEntryHeaders as Headers } from '../../archive/tar-entries.js';
import { StorageIoError } from '../../errors/storage-io-error.js';
import { ProviderPermanentError } from '../provider-errors.js';

/** Bytes of an object read at once. */
const READ_BYTES = 256 * 1024;
/** Objects up to this size are read whole and synchronously. */
const SMALL_BYTES = 64 * 1024;
/** Entries between two turns of the event loop. */
const YIELD_EVERY = 256;

/** Limits of one packed archive. */
export interface PackLimits {
  /** The gzip'd archive may not exceed this (the SDK uploads from memory). */
  readonly maxBytes: number;
}

/**
 * The gzip'd tar of revision tree `root` of `store`, or `null` when a name, symlink target or
 * time in it cannot be written by this packer (the caller then materialises and uses `tar`).
 */
export async function packRevisionObjects(store: ObjectStore, root: string, limits: PackLimits, signal: AbortSignal): Promise<Buffer | null> {
  const pack = tarPack();
  const gzip = createGzip();
  const chunks: Buffer[] = [];
  let size = 0;
  // Every wait below races this: a failure anywhere (the pack, gzip, the size cap, the caller's
  // signal) ends the packing instead of leaving a write waiting for a drain that never comes.
  let fail!: (error: unknown) => void;
  const failure = new Promise<never>((_, reject) => (fail = reject));
  failure.catch(() => undefined);
  const until = <T>(work: Promise<T>): Promise<T> => Promise.race([work, failure]);
  const onAbort = () => fail(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  pack.on('error', (error: unknown) => fail(error));
  gzip.on('error', (error) => fail(error));
  gzip.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limits.maxBytes) chunks.push(chunk);
    else fail(new ProviderPermanentError('vercel', 'importTree', `cannot pack the revision: the archive exceeds ${limits.maxBytes} bytes`, { context: { maxBytes: limits.maxBytes } }));
  });
  const ended = once(gzip, 'end');
  const joined = coalescer();
  joined.on('error', (error) => fail(error));
  pack.pipe(joined).pipe(gzip);

  // An entry without content (directory, symlink, FIFO), or with all of it.
  const add = (header: Headers, content?: Buffer): Promise<void> =>
    until(
      new Promise<void>((resolve, reject) => {
        const done = (error?: Error | null) => (error ? reject(error) : resolve());
        if (content) pack.entry(header, content, done);
        else pack.entry(header, done);
      }),
    );

  // A small file: its object read whole, synchronously.
  const addSmallFile = (header: Headers, object: string): Promise<void> => add(header, readSmallObject(store, object, header.size!));

  // A file: the object's bytes, read in pieces; an object of another size than the tree's fails.
  const addFile = async (header: Headers, object: string): Promise<void> => {
    const path = store.objectPath(object);
    const short = (held: string) => new StorageIoError({ operation: 'restore read', path, errno: 'EIO' }, `object holds ${held} bytes, its tree says ${header.size}`);
    const input = await store.openObject(object);
    try {
      const entry = pack.entry(header, (error) => void (error ? fail(error) : undefined));
      const done = new Promise<void>((resolve, reject) => {
        entry.once('close', resolve);
        entry.once('error', reject);
      });
      let read = 0;
      for (;;) {
        const buffer = Buffer.allocUnsafe(Math.min(READ_BYTES, header.size! - read + 1));
        const { bytesRead } = await until(input.read(buffer, 0, buffer.length, null));
        if (bytesRead === 0) break;
        read += bytesRead;
        if (read > header.size!) throw short(`more than ${header.size}`);
        if (!entry.write(buffer.subarray(0, bytesRead))) await until(once(entry, 'drain'));
      }
      if (read !== header.size) throw short(String(read));
      entry.end();
      await until(done);
    } finally {
      await input.close();
    }
  };

  const now = new Date();
  const dir = (name: string, mode: number): Headers => ({ name, type: 'directory', mode, mtime: now, uid: 0, gid: 0 });
  let entries = 0;
  const walk = async (tree: string, prefix: string): Promise<void> => {
    for (const node of await until(store.readTree(tree))) {
      signal.throwIfAborted();
      // Small files are read synchronously: let timers (a job's lock renewal) run now and then.
      if (++entries % YIELD_EVERY === 0) await setImmediate();
      await entry(node, prefix);
    }
  };
  const entry = async (node: TreeNode, prefix: string): Promise<void> => {
    const name = `${prefix}${text(node.name)}`;
    switch (node.type) {
      case 'd':
        await add(dir(`${name}/`, node.mode));
        await walk(node.tree, `${name}/`);
        return;
      case 'f': {
        const header: Headers = { name, type: 'file', mode: node.mode, size: node.size, uid: 0, gid: 0, ...timed(node.mtimeNs) };
        await (node.size <= SMALL_BYTES ? addSmallFile(header, node.object) : addFile(header, node.object));
        return;
      }
      case 'l':
        await add({ name, type: 'symlink', linkname: text(node.target), mode: 0o777, mtime: now, uid: 0, gid: 0 });
        return;
      case 'p':
        await add({ name, type: 'fifo', mode: node.mode, uid: 0, gid: 0, ...timed(node.mtimeNs) });
        return;
    }
  };

  try {
    await add(dir('./', 0o700));
    await walk(root, './');
    pack.finalize();
    await until(ended);
  } catch (error) {
    pack.destroy();
    joined.destroy();
    gzip.destroy();
    if (error instanceof NotRepresentable) return null;
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  return Buffer.concat(chunks, size);
}
