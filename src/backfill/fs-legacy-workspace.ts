/**
 * A legacy workspace whose files are regular files on a local filesystem (the flat blob
 * directory, or the exported tree of a restored provider snapshot). Every read opens the file
 * with `openRegularFile`, so a file replaced by a symlink after listing is refused, not followed.
 */
import type { Readable } from 'node:stream';
import { LegacyFileVanishedError } from '../errors/legacy-file-vanished-error.js';
import type { LegacyFile, LegacyListing, LegacyWorkspace } from './legacy-source.js';
import { openRegularFile, sha256Of } from './open-regular-file.js';

export interface FsLegacyWorkspaceOptions {
  readonly workspaceId: string;
  readonly origin: string;
  list(signal?: AbortSignal): Promise<LegacyListing>;
  /** Absolute path (bytes) of a listed file. */
  locate(file: LegacyFile): Buffer;
  close?(): Promise<void>;
}

export class FsLegacyWorkspace implements LegacyWorkspace {
  readonly workspaceId: string;
  readonly origin: string;

  constructor(private readonly options: FsLegacyWorkspaceOptions) {
    this.workspaceId = options.workspaceId;
    this.origin = options.origin;
  }

  list(signal?: AbortSignal): Promise<LegacyListing> {
    return this.options.list(signal);
  }

  async open(file: LegacyFile): Promise<Readable> {
    const handle = await openRegularFile(this.options.locate(file));
    if (!handle) throw new LegacyFileVanishedError(this.workspaceId, file.path);
    return handle.createReadStream();
  }

  async read(file: LegacyFile): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.open(file)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async checksum(file: LegacyFile): Promise<string> {
    return sha256Of(await this.open(file));
  }

  async close(): Promise<void> {
    await this.options.close?.();
  }
}
