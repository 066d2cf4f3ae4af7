/**
 * Waits out a `write(2)` under way into an open file, without reading its bytes or changing it.
 *
 * A buffered write holds the inode's lock exclusively for its whole copy into the page cache. A
 * writer descheduled mid-copy, or blocked on a page fault of its own buffer, leaves the file
 * half-written with its stat unmoved (its ctime was set when the write began), so two reads in a
 * row agree on bytes of two versions. A direct-I/O read takes that lock shared before anything
 * else on ext4 and xfs: one made through a second descriptor of the same open file
 * (`/proc/self/fd/N` names the inode the first descriptor holds; nothing in the tree is resolved
 * again), at an offset past any end, returns only once every write that began before it has
 * finished copying, and reads nothing.
 *
 * Only on filesystems known to take the lock first (`keepsWriteLock`): btrfs checks alignment
 * before it locks, tmpfs reads without the lock. Elsewhere callers wait by the clock instead.
 *
 * A barrier holds a thread-pool thread until the write ends, which a sandbox chooses. So a
 * caller waits at most `timeoutMs` (then nothing is known: false), at most `MAX_IN_FLIGHT`
 * barriers of the process are in the pool at once (the rest of the pool stays free however many
 * writes stall), and an inode whose earlier barrier has not returned gets no second one (false
 * at once: a write is under way there now).
 */
import { closeSync, constants, openSync, read, statfsSync } from 'node:fs';
import { promisify } from 'node:util';

const EXT4_SUPER_MAGIC = 0xef53;
const XFS_SUPER_MAGIC = 0x58465342;
/** An offset past the end of any file here: the read returns at once, once it has the lock. */
const PAST_ANY_END = 2 ** 40;
const DIRECT_READ_FLAGS = constants.O_RDONLY | constants.O_DIRECT | constants.O_NOCTTY;
/** Barriers in the thread pool at once, process-wide (the pool has 4 threads by default). */
export const MAX_IN_FLIGHT = 2;

const readAsync = promisify(read);
let inFlight = 0;
/** Callers waiting for a place in the pool, in order. */
const queue: (() => void)[] = [];
/** Inodes (`dev:ino`) with a barrier not yet returned. */
const pending = new Set<string>();

// A place in the pool: taken at once when one is free, else handed over by the barrier that leaves it.
async function place(): Promise<void> {
  if (inFlight < MAX_IN_FLIGHT) {
    inFlight += 1;
    return;
  }
  await new Promise<void>((resolve) => queue.push(resolve));
}

function leave(): void {
  const next = queue.shift();
  if (next) next();
  else inFlight -= 1;
}

/** Whether the filesystem of the open directory `dirFd` serialises direct reads behind buffered writes (ext4, xfs). */
export function keepsWriteLock(dirFd: number): boolean {
  try {
    const { type } = statfsSync(`/proc/self/fd/${dirFd}`);
    return type === EXT4_SUPER_MAGIC || type === XFS_SUPER_MAGIC;
  } catch {
    return false;
  }
}

/**
 * Resolves true once no `write(2)` that began before the call is still copying into the regular
 * file open as `fd` (inode `inode`, as `dev:ino`); false when that is not known within
 * `timeoutMs`, when a barrier of the same inode is still waiting, or when none could be made (the
 * file's permissions changed since it was opened, say).
 */
export async function writesDone(fd: number, inode: string, timeoutMs: number): Promise<boolean> {
  if (pending.has(inode)) return false;
  let direct: number;
  try {
    // Opened now, while `fd` is surely the caller's file (it may be closed once this answers).
    direct = openSync(`/proc/self/fd/${fd}`, DIRECT_READ_FLAGS);
  } catch {
    return false;
  }
  pending.add(inode);
  let timer: NodeJS.Timeout | undefined;
  let late = false;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      late = true;
      resolve(false);
    }, timeoutMs);
  });
  const barrier = (async () => {
    try {
      await place();
      try {
        if (!late) await readAsync(direct, Buffer.alloc(1), 0, 1, PAST_ANY_END);
        return !late;
      } finally {
        leave();
      }
    } catch {
      return false;
    } finally {
      closeSync(direct);
      pending.delete(inode);
    }
  })();
  try {
    return await Promise.race([barrier, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
