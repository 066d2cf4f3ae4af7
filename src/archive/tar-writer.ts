/**
 * Entries of a POSIX pax tar (tar-header.ts) gathered into chunks of `CHUNK_BYTES` for a sink: the
 * restore through the host's tar (extract-revision.ts) writes a revision into `tar -x` with it.
 * tar-stream costs about 0.2 ms an entry (a stream and promises each), more than GNU tar needs
 * to make the file.
 */
import { TAR_END, tarHeader, tarPadding, type TarHeader } from './tar-header.js';

/** Bytes gathered before they go to the sink. */
const CHUNK_BYTES = 256 * 1024;

export class TarWriter {
  #parts: Buffer[] = [];
  #bytes = 0;

  constructor(private readonly sink: (chunk: Buffer) => Promise<void>) {}

  /** Adds one entry (a file with its whole `content`); resolves once the sink took a full chunk, if one was. */
  async add(header: Omit<TarHeader, 'size'>, content?: Buffer): Promise<void> {
    const size = header.type === 'file' ? (content?.length ?? 0) : 0;
    this.#push(tarHeader({ ...header, size }));
    if (size > 0) this.#push(content!, tarPadding(size));
    if (this.#bytes >= CHUNK_BYTES) await this.#flush();
  }

  /** Closes the archive and hands the rest to the sink. */
  async end(): Promise<void> {
    this.#push(TAR_END);
    await this.#flush();
  }

  #push(...parts: Buffer[]): void {
    for (const part of parts) {
      if (part.length === 0) continue;
      this.#parts.push(part);
      this.#bytes += part.length;
    }
  }

  async #flush(): Promise<void> {
    if (this.#bytes === 0) return;
    const chunk = Buffer.concat(this.#parts, this.#bytes);
    this.#parts = [];
    this.#bytes = 0;
    await this.sink(chunk);
  }
}
