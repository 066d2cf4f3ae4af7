/**
 * Entries of a POSIX pax tar (tar-header.ts) written into chunks of about `CHUNK_BYTES` for a
 * sink: the restore through the host's tar (extract-revision.ts) writes a revision into `tar -x`
 * with it. Headers and contents are written in place: a file's content is read by the caller
 * straight into the chunk (`addFile`), so a restore makes no buffer per file and copies no
 * content twice. A chunk handed to the sink is never written again until the sink releases it
 * (once its bytes have left the process): a restore's chunks are then a few reused buffers, where
 * a new one per chunk made the 130 MB of a 10,000-file restore garbage whose external memory set
 * off a full GC every 50 ms (BENCHMARKS.md, run T).
 * tar-stream costs about 0.2 ms an entry (a stream and promises each), more than GNU tar needs to
 * make the file.
 */
import { paddingOf, TAR_END, tarHeaderBytes, writeTarHeader, type TarHeader } from './tar-header.js';

/** Bytes gathered before they go to the sink. */
const CHUNK_BYTES = 256 * 1024;
/** Room of a chunk: an entry that does not fit what is left sends the chunk first; one larger than the room gets a chunk of its own. */
const CHUNK_ROOM = CHUNK_BYTES + 64 * 1024;

/** Released chunks kept for reuse, at most (the sink's backpressure keeps fewer in flight). */
const FREE_CHUNKS = 8;

/** Takes a chunk of the sink's; `release` says its bytes are no longer needed (its buffer is then reused). */
export type ChunkSink = (chunk: Buffer, release: () => void) => Promise<void>;

/** Writes a file's `size` content bytes at `offset` of `target`; `target` has room for `size + 1` (a reader may check that no more follow). */
export type FillContent = (target: Buffer, offset: number) => void;

export class TarWriter {
  readonly #free: Buffer[] = [];
  #chunk = this.#take();
  #at = 0;

  constructor(private readonly sink: ChunkSink) {}

  /**
   * Adds one entry, a file with its whole `content` if given. Resolves once the sink took a full
   * chunk, if one was; answers undefined when nothing waits (no promise made per entry).
   */
  add(header: Omit<TarHeader, 'size'>, content?: Buffer): Promise<void> | undefined {
    if (header.type !== 'file' || content === undefined || content.length === 0) return this.addFile(header, 0, null);
    return this.addFile(header, content.length, (target, offset) => content.copy(target, offset));
  }

  /** Adds a file of `size` bytes that `fill` writes into the chunk (see `add`). */
  addFile(header: Omit<TarHeader, 'size'>, size: number, fill: FillContent | null): Promise<void> | undefined {
    // One literal of one shape (a spread per entry made a restore's headers slower to build).
    const entry: TarHeader = { path: header.path, type: header.type, mode: header.mode, size: header.type === 'file' ? size : 0, mtimeNs: header.mtimeNs, uid: header.uid, gid: header.gid, linkpath: header.linkpath };
    if (!this.#put(entry, fill)) {
      return this.#flush().then(() => {
        if (this.#put(entry, fill)) return this.#flushIfFull();
        // Larger than a whole chunk's room: a chunk of its own.
        this.#chunk = Buffer.allocUnsafe(tarHeaderBytes(entry) + entry.size + paddingOf(entry.size) + 1);
        if (!this.#put(entry, fill)) throw new Error('tar entry does not fit a chunk made for it');
        return this.#flush();
      });
    }
    return this.#flushIfFull();
  }

  /** Closes the archive and hands the rest to the sink. */
  async end(): Promise<void> {
    if (this.#chunk.length - this.#at < TAR_END.length) await this.#flush();
    TAR_END.copy(this.#chunk, this.#at);
    this.#at += TAR_END.length;
    await this.#flush();
  }

  // Writes the entry into the chunk when it fits (its content and padding, and a byte past the content for the reader).
  #put(entry: TarHeader, fill: FillContent | null): boolean {
    const header = writeTarHeader(this.#chunk, this.#at, entry);
    if (header < 0) return false;
    const { size } = entry;
    const padding = paddingOf(size);
    const start = this.#at + header;
    if (start + size + Math.max(padding, 1) > this.#chunk.length) return false;
    if (size > 0) fill!(this.#chunk, start);
    this.#chunk.fill(0, start + size, start + size + padding);
    this.#at = start + size + padding;
    return true;
  }

  #flushIfFull(): Promise<void> | undefined {
    return this.#at >= CHUNK_BYTES ? this.#flush() : undefined;
  }

  async #flush(): Promise<void> {
    if (this.#at === 0) return;
    const full = this.#chunk;
    const chunk = full.subarray(0, this.#at);
    this.#chunk = this.#take();
    this.#at = 0;
    let released = false;
    await this.sink(chunk, () => {
      // A chunk made for one large entry is not kept.
      if (released || full.length !== CHUNK_ROOM || this.#free.length >= FREE_CHUNKS) return;
      released = true;
      this.#free.push(full);
    });
  }

  // A chunk of CHUNK_ROOM: a released one, else new (its own memory, never Node's shared pool).
  #take(): Buffer {
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(CHUNK_ROOM);
  }
}
