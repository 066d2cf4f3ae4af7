/**
 * A streaming reader of tar archives as GNU tar writes them: ustar headers (with the `prefix`
 * field), pax extended headers (`x`, `g`: `path`, `linkpath`, `size`, `mtime`), GNU long names
 * (`L`, `K`) and base-256 numbers. It only parses; what to do with each entry is the caller's.
 */
import { ByteReader } from './byte-reader.js';

const BLOCK = 512;

export type TarEntryType = 'file' | 'directory' | 'symlink' | 'hardlink' | 'other';

export interface TarEntry {
  /** The path as stored (not yet checked for safety), decoded as UTF-8. */
  readonly path: string;
  /** The path's exact bytes (names need not be UTF-8). */
  readonly pathBytes: Buffer;
  readonly type: TarEntryType;
  /** The raw typeflag character (e.g. `3` for a character device). */
  readonly typeflag: string;
  readonly mode: number;
  /** Modification time in seconds since the epoch (may be fractional via pax). */
  readonly mtime: number;
  readonly size: number;
  readonly linkpath: string;
  /** The link target's exact bytes. */
  readonly linkpathBytes: Buffer;
}

/** One entry and its content; the content must be consumed (or ignored) before the next entry. */
export interface TarItem {
  readonly entry: TarEntry;
  readonly content: AsyncIterable<Buffer>;
}

/** Yields the entries of a tar stream in order. Throws on a corrupt or truncated archive. */
export async function* readTar(source: AsyncIterable<Buffer | Uint8Array | string>): AsyncGenerator<TarItem> {
  const reader = new ByteReader(source);
  let globalPax: Record<string, Buffer> = {};
  let pax: Record<string, Buffer> = {};
  let longName: Buffer | undefined;
  let longLink: Buffer | undefined;
  for (;;) {
    const header = await reader.read(BLOCK);
    if (header === null || header.every((byte) => byte === 0)) return;
    verifyChecksum(header);
    const typeflag = String.fromCharCode(header[156]!) || '0';
    const size = numeric(header, 124, 12);
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (typeflag === 'x' || typeflag === 'g' || typeflag === 'L' || typeflag === 'K') {
      const body = (await reader.read(padded)) ?? Buffer.alloc(0);
      const data = body.subarray(0, size);
      if (typeflag === 'x') pax = { ...pax, ...parsePax(data) };
      else if (typeflag === 'g') globalPax = { ...globalPax, ...parsePax(data) };
      else if (typeflag === 'L') longName = cBytes(data);
      else longLink = cBytes(data);
      continue;
    }
    const fields = { ...globalPax, ...pax };
    const pathBytes = fields.path ?? longName ?? ustarName(header);
    const linkpathBytes = fields.linkpath ?? longLink ?? cBytes(header.subarray(157, 257));
    const entry: TarEntry = {
      path: pathBytes.toString('utf8'),
      pathBytes,
      type: entryType(typeflag),
      typeflag,
      mode: numeric(header, 100, 8),
      mtime: fields.mtime !== undefined ? Number(fields.mtime.toString('latin1')) : numeric(header, 136, 12),
      size: fields.size !== undefined ? Number(fields.size.toString('latin1')) : size,
      linkpath: linkpathBytes.toString('utf8'),
      linkpathBytes,
    };
    pax = {};
    longName = undefined;
    longLink = undefined;
    // Directories and links carry no data; every other kind stores `size` bytes.
    const bodySize = entry.type === 'directory' || entry.type === 'symlink' || entry.type === 'hardlink' ? 0 : entry.size;
    let consumed = false;
    const content = (async function* () {
      consumed = true;
      yield* reader.stream(bodySize);
    })();
    yield { entry, content };
    if (!consumed) await reader.skip(bodySize);
    else await drain(content);
    await reader.skip(Math.ceil(bodySize / BLOCK) * BLOCK - bodySize);
  }
}

// Finishes a partly consumed content iterator so the reader is at the padding.
async function drain(content: AsyncIterable<Buffer>): Promise<void> {
  for await (const _ of content);
}

// Typeflag → entry kind ('0', NUL and '7' are regular files).
function entryType(typeflag: string): TarEntryType {
  if (typeflag === '0' || typeflag === '\0' || typeflag === '7') return 'file';
  if (typeflag === '5') return 'directory';
  if (typeflag === '2') return 'symlink';
  if (typeflag === '1') return 'hardlink';
  return 'other';
}

// The name of a ustar header, joined with its `prefix` field (exact bytes).
function ustarName(header: Buffer): Buffer {
  const name = cBytes(header.subarray(0, 100));
  const magic = header.subarray(257, 262).toString('latin1');
  const prefix = magic === 'ustar' ? cBytes(header.subarray(345, 500)) : Buffer.alloc(0);
  return prefix.length === 0 ? name : Buffer.concat([prefix, Buffer.from('/'), name]);
}

// The bytes of a NUL-terminated field (copied: the header buffer is reused).
function cBytes(field: Buffer): Buffer {
  const end = field.indexOf(0);
  return Buffer.from(field.subarray(0, end === -1 ? field.length : end));
}

// A NUL-terminated ASCII field (numbers).
function cString(field: Buffer): string {
  return cBytes(field).toString('latin1');
}

// An octal (or GNU base-256) number field.
function numeric(header: Buffer, offset: number, length: number): number {
  const field = header.subarray(offset, offset + length);
  if ((field[0]! & 0x80) !== 0) {
    let value = field[0]! & 0x7f;
    for (let i = 1; i < field.length; i += 1) value = value * 256 + field[i]!;
    return value;
  }
  const text = cString(field).trim();
  return text === '' ? 0 : Number.parseInt(text, 8);
}

// Pax records: "<len> <key>=<value>\n" (values kept as bytes: paths need not be UTF-8).
function parsePax(data: Buffer): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space === -1) break;
    const length = Number.parseInt(data.subarray(at, space).toString('latin1'), 10);
    if (!Number.isFinite(length) || length <= 0) throw new Error('corrupt pax header');
    const record = data.subarray(space + 1, at + length - 1);
    const eq = record.indexOf(0x3d);
    if (eq > 0) out[record.subarray(0, eq).toString('latin1')] = Buffer.from(record.subarray(eq + 1));
    at += length;
  }
  return out;
}

// Checks the header checksum (sum of bytes with the checksum field read as spaces).
function verifyChecksum(header: Buffer): void {
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  if (sum !== numeric(header, 148, 8)) throw new Error('corrupt tar header (checksum mismatch)');
}
