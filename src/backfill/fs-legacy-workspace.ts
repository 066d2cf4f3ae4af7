/**
 * A legacy workspace whose files are regular files on a local filesystem (the flat blob
 * directory, or the exported tree of a restored provider snapshot). Every read opens the file
 * with `openRegularFile`, so a file replaced by a symlink after listing is refused, not followed.
 *
 * `read` hashes the bytes it returns and remembers the digest with the file's identity (inode,
 * size, mtime, ctime); `checksum` answers from that memory while an lstat shows the same
 * identity (the file has not changed since it was read), and re-reads and hashes it otherwise.
 */
import { createHash } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import type { Readable } from 'node:stream';
import { LegacyFileVanishedError } from '../errors/legacy-file-vanished-error.js';
import type { LegacyFile, LegacyListing, LegacyWorkspace } from './legacy-source.js';
import { openRegularFile, readOpened, sha256Of } from './open-regular-file.js';

export interface FsLegacyWorkspaceOptions {
  readonly workspaceId: string;
  readonly origin: string;
  list(signal?: AbortSignal): Promise<LegacyListing>;
  /** Absolute path (bytes) of a listed file. */
  locate(file: LegacyFile): Buffer;
  close?(): Promise<void>;
}

interface Digest {
  readonly sha256: string;
  readonly identity: string;
}

// What identifies one version of a file without reading it.
const identityOf = (s: Stats) => `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;

export class FsLegacyWorkspace implements LegacyWorkspace {
  readonly workspaceId: string;
  readonly origin: string;
  readonly #digests = new Map<string, Digest>();

  constructor(private readonly options: FsLegacyWorkspaceOptions) {
    this.workspaceId = options.workspaceId;
    this.origin = options.origin;
  }

  list(signal?: AbortSignal): Promise<LegacyListing> {
    return this.options.list(signal);
  }

  // Opens a listed file (no symlink followed) or throws LegacyFileVanished.
  async #open(file: LegacyFile) {
    const opened = await openRegularFile(this.options.locate(file));
    if (!opened) throw new LegacyFileVanishedError(this.workspaceId, file.path);
    return opened;
  }

  async open(file: LegacyFile): Promise<Readable> {
    return (await this.#open(file)).handle.createReadStream();
  }

  async read(file: LegacyFile): Promise<Buffer> {
    const opened = await this.#open(file);
    try {
      const content = await readOpened(opened);
      // Remembered with the identity at open: a change during or after the read changes the
      // ctime, so `checksum` re-reads the file and the copy no longer matches it.
      this.#digests.set(file.path, { sha256: createHash('sha256').update(content).digest('hex'), identity: identityOf(opened.stats) });
      return content;
    } finally {
      await opened.handle.close();
    }
  }

  async checksum(file: LegacyFile): Promise<string> {
    const known = this.#digests.get(file.path);
    if (known) {
      const now = await lstat(this.options.locate(file)).catch(() => null);
      if (now?.isFile() && identityOf(now) === known.identity) return known.sha256;
    }
    return sha256Of(await this.open(file));
  }

  async close(): Promise<void> {
    await this.options.close?.();
  }
}
