/**
 * Restores a format 2 revision into an empty staging directory (the fleet's alone until it is
 * swapped in) through the host's GNU tar: the revision travels as a pax tar written straight
 * from the archive into `tar -x`, which makes the files in its own process while this one reads
 * the objects. materializeRevision makes every file from here, five thread-pool round trips each;
 * at 100,000 small files that is most of a restore (BENCHMARKS.md, "Restore through tar").
 *
 * What the tar does not carry:
 * - files over `SMALL_COPY_BYTES` and the other names of their inodes: copied afterwards the way
 *   materializeRevision copies them (a reflink where the filesystem has them, holes kept);
 * - directory modes: tar makes every directory 0700, and each gets its mode last, deepest first,
 *   once everything beneath it is in (a read-only directory is filled before it is closed), by
 *   synchronous chmods (a few microseconds each in a tree just made, where a thread-pool round
 *   trip each took 10–13 ms of a 10,000-file restore's 340; BENCHMARKS.md, run AF).
 *
 * Everything else is what materializeRevision makes: modes, file times to the nanosecond (as Node
 * sets them, before 1970 too), symlinks, FIFOs, the names of one inode as hard links of one
 * inode, names and symlink targets as raw bytes (tar-header.ts; GNU tar keeps them as bytes under
 * `LC_ALL=C`), every entry owned by `owner` when given, else by this process.
 *
 * With an owner (a namespaced workspace's uid), tar runs as the owner, in a staging root made the
 * owner's first: what it makes is the owner's without a chown per entry (run AE: 0.87 of the
 * restore's time at 10,000 files, 0.90 at 100,000), and it can write nowhere the owner cannot.
 * The staging tree is out of every sandbox's reach all the same (beneath the workspace's 0700
 * directory, and each sandbox in its own pid namespace sees no host tar); the large files after
 * the tar are copied as the fleet, as materializeRevision copies them.
 *
 * A revision whose tar fails on its own (a full disk, say) is materialised instead: the staging
 * directory is emptied first, and materializeRevision's errors are typed by errno, where tar's
 * exit status is not.
 */
import { once } from 'node:events';
import { chmodSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { anySignal } from '../lib/any-signal.js';
import { runCommand } from '../lib/run-command.js';
import { mapBounded } from '../lib/map-bounded.js';
import { chownDir } from '../tree/chown-tree.js';
import { storedMtimeNs } from '../tree/file-times.js';
import { DirHandle } from '../tree/dir-handle.js';
import { removeEntry } from '../tree/remove-tree.js';
import { copyObjectInto, materializeRevision, SMALL_COPY_BYTES, type Materialized, type MaterializeOptions } from './materialize-revision.js';
import type { ObjectStore } from './object-store.js';
import { ObjectReadAhead } from './object-read-ahead.js';
import { readSmallObjectInto } from './tar-entries.js';
import { TarWriter } from './tar-writer.js';
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
/**
 * tar's record size: the bytes it reads from its input at a time, and the most content of a file
 * it writes at once. Its default of 10 KiB took a read per 10 KiB of the stream and split every
 * file that crossed a record into two writes (12,852 reads and 20,688 writes for 10,000 files of
 * 13 KB); records of our chunks' size take a read per 140 KB or so (what the socket holds) and about
 * one write per file: a third of tar's system calls gone, 0.89–0.94 of the restore's time and 0.88
 * of its CPU (BENCHMARKS.md, run AG). GNU tar reblocks input from a pipe, so the last record of a
 * stream may be short.
 */
const TAR_RECORD_BYTES = 256 * 1024;

export interface ExtractOptions extends MaterializeOptions {
  /** Deadline of the host's tar (the caller's signal may end it sooner). */
  readonly timeoutMs: number;
}

export interface Extracted extends Materialized {
  /** How the revision was made: `materialize` when it could not go through tar (`tarFailure` says why tar failed, if it ran). */
  readonly via: 'tar' | 'materialize';
  readonly tarFailure?: string;
  /** Objects read ahead through the thread pool because the synchronous reads were slow (object-read-ahead.ts). */
  readonly readAhead?: number;
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
}

// What is left for after the tar. Trees are read synchronously (the event loop turned every
// YIELD_MS): through the thread pool, one after another, they were most of a first restore's plan.
async function planExtract(store: ObjectStore, root: string): Promise<Plan> {
  const plan: Plan = { dirs: [], late: [], lateKeys: new Set() };
  let turn = performance.now();
  const visit = async (tree: string, rel: Buffer): Promise<void> => {
    if (performance.now() - turn >= YIELD_MS) {
      await setImmediate();
      turn = performance.now();
    }
    for (const node of store.readTreeSync(tree)) {
      const childPath = childRel(rel, node.name);
      if (node.type === 'd') {
        plan.dirs.push({ rel: childPath, mode: node.mode });
        await visit(node.tree, childPath);
      } else if (node.type === 'f' && node.size > SMALL_COPY_BYTES) {
        plan.late.push({ dirRel: rel, rel: childPath, node });
        if (node.linkKey !== undefined) (plan.lateKeys as Set<string>).add(node.linkKey);
      }
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

  const input = new PassThrough();
  // The writer stops when tar ends early (it would wait for a drain that never comes) or fails.
  const stop = new AbortController();
  const signal = anySignal([options.signal, stop.signal]);
  // A chunk is written again only once tar's stdin has written it to the kernel. The pipe passes
  // chunks on in order: at a drain of tar's stdin, every byte that has left the PassThrough (all
  // written to it, less what it still holds) is in the kernel, and the chunks wholly within them
  // are released. (A `data` listener would tell the same, but kept the PassThrough flowing into
  // nothing once tar had gone.)
  const inFlight: { readonly end: number; readonly release: () => void }[] = [];
  let writtenBytes = 0;
  // With an owner, tar runs as the owner (it makes everything the owner's without a chown per
  // entry, and writes only where the owner may): the staging root is the owner's first.
  if (owner) await chownDir(dest, owner.uid, owner.gid);
  const tar = runCommand(
    'tar',
    ['-x', '-f', '-', `--record-size=${TAR_RECORD_BYTES}`, '-C', '/proc/self/fd/3', '--preserve-permissions', '--numeric-owner', '--no-same-owner'],
    {
      env: { PATH: options.systemPath, LC_ALL: 'C' },
      // Not the fleet's working directory, which the owner may not enter.
      cwd: '/',
      ...(owner ? { runAs: owner } : {}),
      timeoutMs: options.timeoutMs,
      signal,
      stdin: input,
      fds: [dest.fd],
      onStdinDrained: () => {
        // Bytes a chunk holds are counted on both sides of the PassThrough while it passes: the count errs towards holding chunks back.
        const handed = writtenBytes - input.readableLength - input.writableLength;
        while (inFlight.length > 0 && inFlight[0]!.end <= handed) inFlight.shift()!.release();
      },
    },
  );
  const tarEnded = tar.then(() => Promise.reject(new TarEndedEarly()));
  tarEnded.catch(() => undefined);
  const until = <T>(work: Promise<T>): Promise<T> => Promise.race([work, tarEnded]);
  const writer = new TarWriter(async (chunk, release) => {
    writtenBytes += chunk.length;
    inFlight.push({ end: writtenBytes, release });
    if (!input.write(chunk)) await until(once(input, 'drain'));
  });

  const inTar = (node: TreeNode): node is FileNode => node.type === 'f' && node.size <= SMALL_COPY_BYTES && (node.linkKey === undefined || !plan.lateKeys.has(node.linkKey));

  // Objects read synchronously wait for the disk one at a time: once they prove slow, read ahead.
  const ahead = new ObjectReadAhead(store, root, { reads: inTar, signal });
  const firstNames = new Map<string, Buffer>();
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
      // Each header is one literal of one shape (a spread per entry was a third of a restore's allocations; run AG).
      // The writer answers a promise only when the sink took a chunk: none is made per entry.
      let wrote: Promise<void> | undefined;
      switch (node.type) {
        case 'd':
          wrote = writer.add({ path: at, type: 'dir', mode: 0o700, mtimeNs: now, uid, gid });
          if (wrote) await wrote;
          await walk(node.tree, at);
          continue;
        case 'f': {
          if (!inTar(node)) continue;
          const first = node.linkKey === undefined ? undefined : firstNames.get(node.linkKey);
          if (first !== undefined) {
            wrote = writer.add({ path: at, type: 'hardlink', mode: node.mode, mtimeNs: now, uid, gid, linkpath: first });
            break;
          }
          if (node.linkKey !== undefined) firstNames.set(node.linkKey, at);
          // The object is read straight into the tar's chunk (timed: slow reads start the read ahead).
          wrote = writer.addFile({ path: at, type: 'file', mode: node.mode, mtimeNs: storedMtimeNs(node.mtimeNs), uid, gid }, node.size, (target, offset) => {
            const started = performance.now();
            readSmallObjectInto(store, node.object, node.size, target, offset);
            ahead.read((performance.now() - started) * 1000);
          });
          counts.files += 1;
          counts.bytes += node.size;
          options.onFile?.(counts.files);
          break;
        }
        case 'l':
          wrote = writer.add({ path: at, type: 'symlink', mode: 0o777, mtimeNs: now, uid, gid, linkpath: node.target });
          break;
        case 'p':
          wrote = writer.add({ path: at, type: 'fifo', mode: node.mode, mtimeNs: storedMtimeNs(node.mtimeNs), uid, gid });
          break;
      }
      if (wrote) await wrote;
    }
  };

  let writeError: unknown = null;
  try {
    await walk(root, Buffer.alloc(0));
    await writer.end();
    input.end();
  } catch (error) {
    if (!(error instanceof TarEndedEarly)) writeError = error;
    stop.abort(error);
    input.destroy();
  } finally {
    await ahead.stop();
  }
  const result = await tar;
  if (writeError !== null) throw writeError;
  options.signal.throwIfAborted();
  if (result.exitCode !== 0) {
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
    if (performance.now() - turn >= YIELD_MS) {
      await setImmediate();
      turn = performance.now();
    }
    const dir = plan.dirs[i]!;
    chmodSync(dest.privatePath(dir.rel), dir.mode);
  }
  return { ...counts, via: 'tar', ...(ahead.readAhead > 0 ? { readAhead: ahead.readAhead } : {}) };
}

/** The host's tar exited while entries were still being written (its exit status says why). */
class TarEndedEarly extends Error {}
