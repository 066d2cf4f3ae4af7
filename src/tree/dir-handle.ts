/**
 * A directory opened by handle, and every operation on its entries resolved *beneath* it.
 *
 * Node has no `openat`, so each entry is addressed as `/proc/self/fd/<fd>/<name>`: the kernel
 * resolves `/proc/self/fd/<fd>` to the open directory itself (not to a path that could be
 * re-resolved), and `<name>` is a single component (names never contain `/`). With `O_NOFOLLOW`
 * on every open and `lstat`/`readlink`/`unlink`/`rmdir`/`link`, which never follow a final
 * symlink, no symlink a sandbox plants in a tree is ever followed, however the tree changes while
 * it is read: a directory swapped for a symlink makes the open fail (`ENOTDIR`/`ELOOP`) instead of
 * reaching outside. Depth is bounded by nothing but open file descriptors (one per level), never
 * by PATH_MAX, because no path string grows with depth.
 *
 * A handle is owned by whoever opened it and must be closed exactly once.
 */
import { close as closeCallback, closeSync, constants, fchmod as fchmodCallback, fstat as fstatCallback, fstatSync, futimes as futimesCallback, lstat as lstatCallback, lstatSync, open as openCallback, openSync, opendirSync, readlinkSync, type BigIntStats } from 'node:fs';
import { link, mkdir, open, opendir, readlink, rename, rmdir, symlink, unlink, type FileHandle } from 'node:fs/promises';

/** Flags of every directory open: never follow the last component, fail unless a directory. */
const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/**
 * Flags for reading a file of a hostile tree: never follow a symlink, never block on a FIFO that
 * was swapped in, never become a controlling terminal.
 */
export const READ_FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
/** Flags for creating a file: exclusive (an existing name, symlink included, fails), never followed. */
export const CREATE_FILE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

const SLASH = 0x2f;

// open(2) returning a raw descriptor.
function openFd(path: Buffer | string, flags: number): Promise<number> {
  return new Promise((resolve, reject) => openCallback(path, flags, (error, fd) => (error ? reject(error) : resolve(fd))));
}

// lstat with exact (bigint) fields: nanosecond mtimes and 64-bit inode numbers.
export function lstatBigint(path: Buffer | string): Promise<BigIntStats> {
  return new Promise((resolve, reject) => lstatCallback(path, { bigint: true }, (error, stats) => (error ? reject(error) : resolve(stats))));
}

function fstatBigint(fd: number): Promise<BigIntStats> {
  return new Promise((resolve, reject) => fstatCallback(fd, { bigint: true }, (error, stats) => (error ? reject(error) : resolve(stats))));
}

/** Throws unless `name` is one path component (not empty, `.`, `..`, and without `/` or NUL). */
export function checkName(name: Buffer): void {
  if (name.length === 0 || name.includes(SLASH) || name.includes(0) || (name.length <= 2 && name.every((b) => b === 0x2e))) {
    throw new TypeError(`not a single path component: ${JSON.stringify(name.toString('latin1'))}`);
  }
}

export class DirHandle {
  /** `/proc/self/fd/<fd>/`, the prefix every entry is addressed by. */
  readonly #prefix: Buffer;
  #closed = false;

  private constructor(
    readonly fd: number,
    /** Identity of the directory when it was opened. */
    readonly stats: BigIntStats,
  ) {
    this.#prefix = Buffer.from(`/proc/self/fd/${fd}/`);
  }

  /**
   * Opens a directory by a path the fleet controls up to its last component, which must be a
   * real directory (a symlink fails with `ENOTDIR`).
   */
  static async open(path: string | Buffer): Promise<DirHandle> {
    const fd = await openFd(path, DIRECTORY_FLAGS);
    return DirHandle.#adopt(fd);
  }

  static #adoptSync(fd: number): DirHandle {
    try {
      return new DirHandle(fd, fstatSync(fd, { bigint: true }));
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  static async #adopt(fd: number): Promise<DirHandle> {
    try {
      return new DirHandle(fd, await fstatBigint(fd));
    } catch (error) {
      closeCallback(fd, () => undefined);
      throw error;
    }
  }

  /** The kernel path of an entry (or of the directory itself), valid while the handle is open. */
  entry(name?: Buffer): Buffer {
    if (this.#closed) throw new Error(`directory handle ${this.fd} is closed`);
    if (name === undefined) return this.#prefix.subarray(0, this.#prefix.length - 1);
    checkName(name);
    return Buffer.concat([this.#prefix, name]);
  }

  /** Opens a child directory beneath this one (`ENOTDIR` if it is anything else, a symlink included). */
  async openDir(name: Buffer): Promise<DirHandle> {
    return DirHandle.#adopt(await openFd(this.entry(name), DIRECTORY_FLAGS));
  }

  /** `openDir` without the thread pool (a tree walk opening thousands of directories, yielding on its own). */
  openDirSync(name: Buffer): DirHandle {
    return DirHandle.#adoptSync(openSync(this.entry(name), DIRECTORY_FLAGS));
  }

  /**
   * The names in this directory, sorted bytewise; at most `max` of them (read in directory order,
   * so a directory of ten million names cannot exhaust memory), `truncated` when there were more.
   */
  async names(max = Number.MAX_SAFE_INTEGER): Promise<Buffer[] & { truncated?: boolean }> {
    const names: Buffer[] & { truncated?: boolean } = [];
    // Node's types omit 'buffer' for opendir, but it returns Buffer names (raw bytes) with it.
    const dir = await opendir(this.entry(), { encoding: 'buffer' as BufferEncoding, bufferSize: 256 });
    try {
      for (let dirent = await dir.read(); dirent !== null; dirent = await dir.read()) {
        if (names.length >= max) {
          names.truncated = true;
          break;
        }
        names.push(dirent.name as unknown as Buffer);
      }
    } finally {
      await dir.close();
    }
    return names.sort(Buffer.compare);
  }

  /**
   * `names`, without the thread pool: one directory's listing is a few getdents64 calls, cheaper
   * done here than as a round trip per batch (the tree walk of a persist). With `regular`, the
   * names the listing itself says are regular files (`d_type`; a filesystem that does not say
   * adds none) are added to it: a hint from when the directory was read, which the entry may no
   * longer match by the time it is opened.
   */
  namesSync(max = Number.MAX_SAFE_INTEGER, regular?: Set<Buffer>): Buffer[] & { truncated?: boolean } {
    const names: Buffer[] & { truncated?: boolean } = [];
    const dir = opendirSync(this.entry(), { encoding: 'buffer' as BufferEncoding, bufferSize: 1024 });
    try {
      for (let dirent = dir.readSync(); dirent !== null; dirent = dir.readSync()) {
        if (names.length >= max) {
          names.truncated = true;
          break;
        }
        names.push(dirent.name as unknown as Buffer);
        if (regular && dirent.isFile()) regular.add(dirent.name as unknown as Buffer);
      }
    } finally {
      dir.closeSync();
    }
    return names.sort(Buffer.compare);
  }

  /** `lstat` without the thread pool (one syscall on a cached inode costs less than the round trip). */
  lstatSync(name: Buffer): BigIntStats {
    return lstatSync(this.entry(name), { bigint: true });
  }

  readlinkSync(name: Buffer): Buffer {
    return readlinkSync(this.entry(name), { encoding: 'buffer' });
  }

  /** Sets the directory's own permission bits (fchmod). */
  chmod(mode: number): Promise<void> {
    return new Promise((resolve, reject) => fchmodCallback(this.fd, mode, (error) => (error ? reject(error) : resolve())));
  }

  /** Sets the directory's own atime and mtime (seconds, like `FileHandle.utimes`; see `nodeTime`). */
  setTimes(seconds: number | string): Promise<void> {
    return new Promise((resolve, reject) => futimesCallback(this.fd, seconds, seconds, (error) => (error ? reject(error) : resolve())));
  }

  /**
   * The kernel path of a descendant `a/b/c`, resolved component by component from this handle.
   * Only for trees the fleet alone writes (a revision under construction): in a tree a sandbox
   * can change, address entries one level at a time with `openDir` and `entry`.
   */
  privatePath(rel: Buffer): Buffer {
    if (rel.length === 0 || rel[0] === SLASH || rel.includes(0)) throw new TypeError(`not a relative path: ${JSON.stringify(rel.toString('latin1'))}`);
    return Buffer.concat([this.entry().subarray(0), Buffer.from('/'), rel]);
  }

  /** fstat of the directory now (`nlink === 0` once it was removed). */
  stat(): Promise<BigIntStats> {
    return fstatBigint(this.fd);
  }

  /** `stat` without the thread pool. */
  statSync(): BigIntStats {
    return fstatSync(this.fd, { bigint: true });
  }

  lstat(name: Buffer): Promise<BigIntStats> {
    return lstatBigint(this.entry(name));
  }

  readlink(name: Buffer): Promise<Buffer> {
    return readlink(this.entry(name), { encoding: 'buffer' });
  }

  /** Opens a file beneath this directory; the flags must include `O_NOFOLLOW`. */
  openFile(name: Buffer, flags: number, mode = 0o600): Promise<FileHandle> {
    if ((flags & constants.O_NOFOLLOW) === 0) throw new TypeError('openFile needs O_NOFOLLOW');
    return open(this.entry(name), flags, mode);
  }

  async mkdir(name: Buffer, mode = 0o700): Promise<void> {
    await mkdir(this.entry(name), { mode });
  }

  symlink(target: Buffer, name: Buffer): Promise<void> {
    return symlink(target, this.entry(name));
  }

  /** Hard-links `from`'s entry `fromName` as `name` here (a final symlink is linked, never followed). */
  link(from: DirHandle, fromName: Buffer, name: Buffer): Promise<void> {
    return link(from.entry(fromName), this.entry(name));
  }

  /** Hard-links the file at kernel path `source` (see `entry`) as `name` here. */
  linkPath(source: Buffer, name: Buffer): Promise<void> {
    return link(source, this.entry(name));
  }

  unlink(name: Buffer): Promise<void> {
    return unlink(this.entry(name));
  }

  rmdir(name: Buffer): Promise<void> {
    return rmdir(this.entry(name));
  }

  rename(name: Buffer, to: DirHandle, toName: Buffer): Promise<void> {
    return rename(this.entry(name), to.entry(toName));
  }

  /** `close` without the thread pool (idempotent). */
  closeSync(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeSync(this.fd);
  }

  /** Closes the handle (idempotent). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await new Promise<void>((resolve) => closeCallback(this.fd, () => resolve()));
  }
}

/** True while `path` still names the directory `opened` described, and it was not removed. */
export async function stillAt(path: string, opened: Pick<DirHandle, 'stats'>): Promise<boolean> {
  const now = await lstatBigint(path).catch(() => null);
  return now !== null && sameInode(now, opened.stats) && now.nlink > 0n;
}

/** True when two stats name the same inode on the same device. */
export function sameInode(a: BigIntStats, b: BigIntStats): boolean {
  return a.ino === b.ino && a.dev === b.dev;
}
