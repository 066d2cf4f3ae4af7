/**
 * A streaming reader of tar archives (made in a sandbox, so untrusted) on tar-stream: ustar
 * headers, pax extended headers and GNU long names, checksums verified, a truncated or corrupt
 * archive an error. It only parses; what to do with each entry is the caller's (apply-delta.ts
 * checks every path before it touches anything).
 *
 * Names need not be UTF-8: header and GNU long names are decoded as latin1, which maps each byte
 * to one character, so `pathBytes` are the exact bytes stored. A pax `path` is UTF-8 by the pax
 * standard (tar-stream decodes it so); its bytes are its UTF-8 encoding.
 */
import { Readable } from 'node:stream';
import { extract as tarExtract, type Headers } from 'tar-stream';

export type TarEntryType = 'file' | 'directory' | 'symlink' | 'hardlink' | 'other';

export interface TarEntry {
  /** The path as stored (not yet checked for safety), decoded as UTF-8. */
  readonly path: string;
  /** The path's exact bytes (names need not be UTF-8). */
  readonly pathBytes: Buffer;
  readonly type: TarEntryType;
  readonly mode: number;
  /** Modification time in seconds since the epoch. */
  readonly mtime: number;
  readonly size: number;
  /** The link target's exact bytes. */
  readonly linkpathBytes: Buffer;
}

/** One entry and its content; the content must be consumed (or ignored) before the next entry. */
export interface TarItem {
  readonly entry: TarEntry;
  readonly content: AsyncIterable<Buffer>;
}

// tar-stream's entry type → ours ('contiguous-file', typeflag 7, is a regular file).
function entryType(type: Headers['type']): TarEntryType {
  if (type === 'file' || type === 'contiguous-file') return 'file';
  if (type === 'directory') return 'directory';
  if (type === 'symlink') return 'symlink';
  if (type === 'link') return 'hardlink';
  return 'other';
}

// The exact bytes of a name: UTF-8 when it came from a pax record, latin1 (byte for byte) otherwise.
function nameBytes(name: string | null | undefined, fromPax: string | undefined): Buffer {
  if (fromPax !== undefined) return Buffer.from(fromPax, 'utf8');
  return Buffer.from(name ?? '', 'latin1');
}

/** The entry of a tar-stream header. */
export function tarEntryOf(header: Headers): TarEntry {
  const pax = (header as Headers & { pax?: Record<string, string> }).pax;
  const pathBytes = nameBytes(header.name, pax?.path);
  return {
    path: pathBytes.toString('utf8'),
    pathBytes,
    type: entryType(header.type),
    mode: header.mode ?? 0,
    mtime: header.mtime ? header.mtime.getTime() / 1_000 : 0,
    size: header.size ?? 0,
    linkpathBytes: nameBytes(header.linkname, pax?.linkpath),
  };
}

/** Yields the entries of a tar stream in order. Throws on a corrupt or truncated archive. */
export async function* readTar(source: AsyncIterable<Buffer | Uint8Array | string>): AsyncGenerator<TarItem> {
  const extract = tarExtract({ filenameEncoding: 'latin1' });
  const input = Readable.from(source, { objectMode: false });
  input.once('error', (error) => extract.destroy(error));
  input.pipe(extract);
  try {
    for await (const stream of extract) {
      let consumed = false;
      const content = (async function* () {
        consumed = true;
        for await (const chunk of stream) yield chunk as Buffer;
      })();
      yield { entry: tarEntryOf(stream.header), content };
      // Whatever the caller left unread is read to its end, so the next header follows.
      if (!consumed) stream.resume();
      else for await (const _ of content);
    }
  } finally {
    input.destroy();
    extract.destroy();
  }
}
