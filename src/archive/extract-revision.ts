/**
 * Restores a format 2 revision into an empty staging directory (the fleet's alone until it is
 * swapped in) through the host's GNU tar: the revision travels as pax tars written straight
 * from the archive into `tar -x` processes, which make the files while this one reads the
 * objects. materializeRevision makes every file from here, five thread-pool round trips each;
 * at 100,000 small files that is most of a restore (BENCHMARKS.md, "Restore through tar").
 *
 * The directories are made first, from here (0700, the owner's), so that several tars can make
 * the files side by side (`tarStreams`, at most one per 1,000 files): each entry goes to a tar
 * whose pipe has room, every name of one inode to the tar that made its first. One tar makes
 * files about as fast as `cp -a`; this process reading the objects keeps two busy
 * (BENCHMARKS.md, "Restore through two tars").
 *
 * What the tar does not carry:
 * - files over `SMALL_COPY_BYTES` and the other names of their inodes: copied afterwards the way
 *   materializeRevision copies them (a reflink where the filesystem has them, holes kept);
 * - directory modes: tar makes every directory 0700, and each gets its mode last, deepest first,
 *   once everything beneath it is in (a read-only directory is filled before it is closed).
 *
 * Everything else is what materializeRevision makes: modes, file times to the nanosecond (as Node
 * sets them, before 1970 too), symlinks, FIFOs, the names of one inode as hard links of one
 * inode, names and symlink targets as raw bytes (tar-header.ts; GNU tar keeps them as bytes under
 * `LC_ALL=C`), every entry owned by `owner` when given (tar runs `--same-owner`), else by this
 * process.
 *
 * A revision whose tar fails on its own (a full disk, say) is materialised instead: the staging
 * directory is emptied first, and materializeRevision's errors are typed by errno, where tar's
 * exit status is not.
 */
import { lchownSync, mkdirSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { setImmediate } from 'node:timers/promises';
import { anySignal } from '../lib/any-signal.js';
import { mapBounded } from '../lib/map-bounded.js';
import { chownDir } from '../tree/chown-tree.js';
import { storedMtimeNs } from '../tree/file-times.js';
import { DirHandle } from '../tree/dir-handle.js';
import { removeEntry } from '../tree/remove-tree.js';
import { copyObjectInto, materializeRevision, SMALL_COPY_BYTES, type Materialized, type MaterializeOptions } from './materialize-revision.js';
import type { ObjectStore } from './object-store.js';
import { ObjectReadAhead } from './object-read-ahead.js';
import { readSmallObjectInto } from './tar-entries.js';
import { TarEndedEarly, TarExtractStream } from './tar-extract-stream.js';
import type { FileNode, TreeNode } from './tree-object.js';
import { childRel } from './tree-walk.js';

/**
 * Longest run of synchronous object reads between two turns of the event loop (ms). Reads from the
 * page cache take microseconds, where a thread-pool round trip per object cost more than the read:
 * reading 32 objects ahead through the pool made the 100,000-file restore 1.4–2.5x slower here
 * (BENCHMARKS.md, "Restore through tar"). A cold archive is read one object at a time.
 */
const YIELD_MS = 20;
/** Large files copied at once after the tar. */
const LATE_CONCURRENCY = 4;
/** Files of the tars' for each tar beyond the first (a tar costs a fork of this process). */
const FILES_PER_TAR = 1_000;

export interface ExtractOptions extends MaterializeOptions {
  /** Deadline of the host's tar (the caller's signal may end it sooner). */
  readonly timeoutMs: number;
  /** Most tars run side by side (fewer for a small revision). @default 1 */
  readonly tarStreams?: number;
}

export interface Extracted extends Materialized {
  /** How the revision was made: `materialize` when it could not go through tar (`tarFailure` says why tar failed, if it ran). */
  readonly via: 'tar' | 'materialize';
  readonly tarFailure?: string;
  /** Objects read ahead through the thread pool because the synchronous reads were slow (object-read-ahead.ts). */
  readonly readAhead?: number;
  /** Tars run side by side (`via: 'tar'`). */
  readonly tars?: number;
}

/** A large file, or another name of its inode, made after the tar. */
interface Late {
  readonly dirRel: Buffer;
  readonly rel: Buffer;
  readonly node: FileNode;
}

/**
 * What the tar leaves to do, found by one pass over the trees before anything is made (the tar
 * walks them again: the store keeps trees it read in memory; the entries themselves are not held,
 * so a million-entry revision costs no million-entry list).
 */
interface Plan {
  /** Directories in pre-order (each before its children), with their modes. */
  readonly dirs: { readonly rel: Buffer; readonly mode: number }[];
  readonly late: Late[];
  /** Link keys whose inode is a large file (every name of it is late). */
  readonly lateKeys: ReadonlySet<string>;
  /** Files small enough for the tar (an upper bound: later names of a late inode are counted too). */
  tarFiles: number;
}

// What is left for after the tar.
async function planExtract(store: ObjectStore, root: string): Promise<Plan> {
  const plan: Plan = { dirs: [], late: [], lateKeys: new Set(), tarFiles: 0 };
  const visit = async (tree: string, rel: Buffer): Promise<void> => {
    for (const node of await store.readTree(tree)) {
      const childPath = childRel(rel, node.name);
      if (node.type === 'd') {
        plan.dirs.push({ rel: childPath, mode: node.mode });
        await visit(node.tree, childPath);
      } else if (node.type === 'f' && node.size > SMALL_COPY_BYTES) {
        plan.late.push({ dirRel: rel, rel: childPath, node });
        if (node.linkKey !== undefined) (plan.lateKeys as Set<string>).add(node.linkKey);
      } else if (node.type === 'f') plan.tarFiles += 1;
    }
  };
  await visit(root, Buffer.alloc(0));
  return plan;
}

/** Restores revision tree `root` of `store` into the empty directory `dest`. */
export async function extractRevision(store: ObjectStore, root: string, dest: DirHandle, options: ExtractOptions): Promise<Extracted> {
  const plan = await planExtract(store, root);
  const { owner } = options;
  const uid = owner?.uid ?? process.getuid?.() ?? 0;
  const gid = owner?.gid ?? process.getgid?.() ?? 0;
  const counts = { files: 0, directories: plan.dirs.length, bytes: 0 };

  // The writers stop when a tar ends early (each would wait for a drain that never comes) or fails.
  const stop = new AbortController();
  const signal = anySignal([options.signal, stop.signal]);
  const tars = Math.max(1, Math.min(options.tarStreams ?? 1, Math.ceil(plan.tarFiles / FILES_PER_TAR)));
  const streams = Array.from({ length: tars }, () => new TarExtractStream({ destFd: dest.fd, sameOwner: owner !== undefined, systemPath: options.systemPath, timeoutMs: options.timeoutMs, signal }));
  const tarEnded = Promise.race(streams.map((stream) => stream.ended));
  tarEnded.catch(() => undefined);
  const until = <T>(work: Promise<T>): Promise<T> => Promise.race([work, tarEnded]);
  // The tar last written to while its pipe has room, else the next one with room.
  let current = 0;
  const withRoom = async (): Promise<TarExtractStream> => {
    for (;;) {
      for (let i = 0; i < streams.length; i++) {
        const at = (current + i) % streams.length;
        if (!streams[at]!.busy) {
          current = at;
          return streams[at]!;
        }
      }
      await until(Promise.race(streams.map((stream) => stream.idle())));
    }
  };

  const inTar = (node: TreeNode): node is FileNode => node.type === 'f' && node.size <= SMALL_COPY_BYTES && (node.linkKey === undefined || !plan.lateKeys.has(node.linkKey));

  // Objects read synchronously wait for the disk one at a time: once they prove slow, read ahead.
  const ahead = new ObjectReadAhead(store, root, { reads: inTar, signal });
  // The first name of each inode of several, and the tar that made it (the others are links to it in the same tar).
  const firstNames = new Map<string, { readonly path: Buffer; readonly stream: TarExtractStream }>();
  const now = BigInt(Date.now()) * 1_000_000n;
  let turn = performance.now();
  const walk = async (tree: string, rel: Buffer): Promise<void> => {
    for (const node of await until(store.readTree(tree))) {
      const at = childRel(rel, node.name);
      signal.throwIfAborted();
      // Objects are read synchronously: timers (the job's lock renewal) run at least every YIELD_MS,
      // and while reading ahead, at every entry (each step of a read ahead needs a turn of the loop).
      if (ahead.active || performance.now() - turn >= YIELD_MS) {
        await setImmediate();
        turn = performance.now();
      }
      const common = { path: at, uid, gid };
      switch (node.type) {
        case 'd':
          await walk(node.tree, at);
          continue;
        case 'f': {
          if (!inTar(node)) continue;
          const first = node.linkKey === undefined ? undefined : firstNames.get(node.linkKey);
          if (first !== undefined) {
            await until(first.stream.idle());
            first.stream.add((writer) => writer.add({ ...common, type: 'hardlink', mode: node.mode, mtimeNs: now, linkpath: first.path }));
            continue;
          }
          const stream = await withRoom();
          if (node.linkKey !== undefined) firstNames.set(node.linkKey, { path: at, stream });
          // The object is read straight into the tar's chunk (timed: slow reads start the read ahead).
          stream.add((writer) =>
            writer.addFile({ ...common, type: 'file', mode: node.mode, mtimeNs: storedMtimeNs(node.mtimeNs) }, node.size, (target, offset) => {
              const started = performance.now();
              readSmallObjectInto(store, node.object, node.size, target, offset);
              ahead.read((performance.now() - started) * 1000);
            }),
          );
          counts.files += 1;
          counts.bytes += node.size;
          options.onFile?.(counts.files);
          continue;
        }
        case 'l':
          (await withRoom()).add((writer) => writer.add({ ...common, type: 'symlink', mode: 0o777, mtimeNs: now, linkpath: node.target }));
          continue;
        case 'p':
          (await withRoom()).add((writer) => writer.add({ ...common, type: 'fifo', mode: node.mode, mtimeNs: storedMtimeNs(node.mtimeNs) }));
          continue;
      }
    }
  };

  let writeError: unknown = null;
  try {
    await makeDirectories(dest, plan.dirs, owner, signal);
    await walk(root, Buffer.alloc(0));
    for (const stream of streams) await until(stream.end());
  } catch (error) {
    if (!(error instanceof TarEndedEarly)) writeError = error;
    stop.abort(error);
    for (const stream of streams) stream.destroy();
  } finally {
    await ahead.stop();
  }
  const results = await Promise.all(streams.map((stream) => stream.done));
  if (writeError !== null) throw writeError;
  options.signal.throwIfAborted();
  // The tar that failed on its own, not one stopped because another had.
  const result = results.find((r) => r.exitCode !== 0 && !r.aborted) ?? results.find((r) => r.exitCode !== 0);
  if (result !== undefined) {
    // tar failed on its own: start again by materialising, whose errors name the errno.
    const status = result.exitCode !== null ? `exited ${result.exitCode}` : result.signal !== null ? `was killed (${result.signal})` : 'did not start';
    const failure = `tar ${status}${result.timedOut ? ' (timed out)' : ''}: ${result.stderr.trim().slice(-500) || 'no output'}`;
    for (const name of await dest.names()) await removeEntry(dest, name);
    return { ...(await materializeRevision(store, root, dest, options)), via: 'materialize', tarFailure: failure };
  }

  // The large files and the other names of their inodes, then every directory's mode, deepest first.
  const lateFirst = new Map<string, Buffer>();
  const lateLinks: Late[] = [];
  const firsts = plan.late.filter((late) => {
    const key = late.node.linkKey;
    if (key === undefined) return true;
    if (lateFirst.has(key)) {
      lateLinks.push(late);
      return false;
    }
    lateFirst.set(key, late.rel);
    return true;
  });
  const inDir = async (dirRel: Buffer, work: (dir: DirHandle) => Promise<void>): Promise<void> => {
    const dir = dirRel.length === 0 ? dest : await DirHandle.open(dest.privatePath(dirRel));
    try {
      await work(dir);
    } finally {
      if (dir !== dest) await dir.close();
    }
  };
  await mapBounded(firsts, LATE_CONCURRENCY, (late) =>
    inDir(late.dirRel, async (dir) => {
      signal.throwIfAborted();
      await copyObjectInto(store, dir, late.node, { owner, signal: options.signal });
      counts.files += 1;
      counts.bytes += late.node.size;
      options.onFile?.(counts.files);
    }),
  );
  for (const late of lateLinks) await inDir(late.dirRel, (dir) => dir.linkPath(dest.privatePath(lateFirst.get(late.node.linkKey!)!), late.node.name));
  for (let i = plan.dirs.length - 1; i >= 0; i--) {
    const dir = plan.dirs[i]!;
    await chmod(dest.privatePath(dir.rel), dir.mode);
  }
  // The root last, like every directory (materializeRevision: it stays the fleet's while its contents are written).
  if (owner) await chownDir(dest, owner.uid, owner.gid);
  return { ...counts, via: 'tar', tars, ...(ahead.readAhead > 0 ? { readAhead: ahead.readAhead } : {}) };
}

/**
 * Every directory of the revision, parents first, 0700 and the owner's (the tar's headers would
 * have made them so): a tar then finds each file's directory made, whichever tar gets there first.
 * Synchronous calls in a tree only the fleet reaches, with a turn of the event loop every YIELD_MS.
 */
async function makeDirectories(dest: DirHandle, dirs: Plan['dirs'], owner: MaterializeOptions['owner'], signal: AbortSignal): Promise<void> {
  let turn = performance.now();
  for (const dir of dirs) {
    if (performance.now() - turn >= YIELD_MS) {
      await setImmediate();
      signal.throwIfAborted();
      turn = performance.now();
    }
    const made = dest.privatePath(dir.rel);
    mkdirSync(made, 0o700);
    if (owner) lchownSync(made, owner.uid, owner.gid);
  }
}
