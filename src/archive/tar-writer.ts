/**
 * A minimal POSIX pax tar writer for the restore through the host's tar (extract-revision.ts):
 * each entry is one pax extended header (its path as raw bytes, `hdrcharset=BINARY`, and a time
 * to the nanosecond) and one ustar header, then its content padded to 512 bytes; entries are
 * gathered into chunks of `CHUNK_BYTES` for the sink. tar-stream costs about 0.2 ms an entry (a
 * stream and promises per entry), more than GNU tar needs to make the file.
 *
 * Pure: the bytes of an archive from entries; where they go is the caller's `sink`.
 */

/** Bytes gathered before they go to the sink. */
const CHUNK_BYTES = 256 * 1024;
const BLOCK = 512;
const ZEROS = Buffer.alloc(BLOCK * 2);
/** Largest value of an 8-byte octal field (7 digits). */
const MAX_OCTAL_7 = 0o7777777;
/** Largest size of the 12-byte octal field (11 digits). */
const MAX_OCTAL_11 = 0o77777777777;

export type TarEntryType = 'file' | 'link' | 'symlink' | 'directory' | 'fifo';

const TYPEFLAG: Record<TarEntryType, number> = { file: 0x30, link: 0x31, symlink: 0x32, directory: 0x35, fifo: 0x36 };

export interface TarEntry {
  /** Path inside the archive, raw bytes (a directory's without its trailing slash). */
  readonly path: Buffer;
  readonly type: TarEntryType;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  /** Modification time in ns since the epoch (≥ 0). */
  readonly mtimeNs: bigint;
  /** Target of a symlink, or the earlier path of a hard link, raw bytes. */
  readonly linkPath?: Buffer;
  /** Content of a file (its size is the length). */
  readonly content?: Buffer;
}

// A pax record: "<length> <key>=<value>\n", the length counting itself.
function paxRecord(key: string, value: Buffer): Buffer {
  const body = 1 + key.length + 1 + value.length + 1;
  let length = body + String(body).length;
  if (String(length).length !== String(body).length) length = body + String(length).length;
  return Buffer.concat([Buffer.from(`${length} ${key}=`, 'latin1'), value, Buffer.from('\n')]);
}

function paxTime(ns: bigint): string {
  if (ns < 0n) throw new RangeError(`a tar time before 1970 is not written here: ${ns}`);
  const whole = ns / 1_000_000_000n;
  const fraction = ns % 1_000_000_000n;
  return fraction === 0n ? String(whole) : `${whole}.${String(fraction).padStart(9, '0')}`;
}

// Writes `value` as a NUL-terminated octal of `width - 1` digits into `header` at `offset`.
function octal(header: Buffer, offset: number, width: number, value: number): void {
  header.write(value.toString(8).padStart(width - 1, '0'), offset, width - 1, 'latin1');
  header[offset + width - 1] = 0;
}

// A ustar header block; `name` is ASCII (the real path travels in the pax header).
function ustarHeader(name: string, typeflag: number, mode: number, uid: number, gid: number, size: number, mtimeS: number): Buffer {
  const header = Buffer.alloc(BLOCK);
  header.write(name, 0, 100, 'latin1');
  octal(header, 100, 8, mode & 0o7777);
  octal(header, 108, 8, Math.min(uid, MAX_OCTAL_7));
  octal(header, 116, 8, Math.min(gid, MAX_OCTAL_7));
  octal(header, 124, 12, size);
  octal(header, 136, 12, Math.max(0, Math.min(mtimeS, MAX_OCTAL_11)));
  header[156] = typeflag;
  header.write('ustar\x0000', 257, 8, 'latin1');
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += header[i]!;
  header.write(`${sum.toString(8).padStart(6, '0')}\x00 `, 148, 8, 'latin1');
  return header;
}

const padding = (size: number): Buffer => ZEROS.subarray(0, (BLOCK - (size % BLOCK)) % BLOCK);

/** Writes entries into `sink` in chunks; `end` writes the two zero blocks that close an archive. */
export class TarWriter {
  #parts: Buffer[] = [];
  #bytes = 0;

  constructor(private readonly sink: (chunk: Buffer) => Promise<void>) {}

  /** Adds one entry; resolves once the sink took what was gathered, when a chunk was full. */
  async add(entry: TarEntry): Promise<void> {
    const size = entry.type === 'file' ? (entry.content?.length ?? 0) : 0;
    if (size > MAX_OCTAL_11) throw new RangeError(`a tar entry of ${size} bytes is not written here`);
    const records = [paxRecord('path', entry.path), paxRecord('mtime', Buffer.from(paxTime(entry.mtimeNs)))];
    if (entry.linkPath) records.push(paxRecord('linkpath', entry.linkPath));
    if (entry.uid > MAX_OCTAL_7) records.push(paxRecord('uid', Buffer.from(String(entry.uid))));
    if (entry.gid > MAX_OCTAL_7) records.push(paxRecord('gid', Buffer.from(String(entry.gid))));
    const pax = Buffer.concat(records);
    const mtimeS = Number(entry.mtimeNs / 1_000_000_000n);
    this.#push(ustarHeader('PaxHeader', 0x78, 0o644, 0, 0, pax.length, mtimeS), pax, padding(pax.length));
    this.#push(ustarHeader('entry', TYPEFLAG[entry.type], entry.mode, entry.uid, entry.gid, size, mtimeS));
    if (size > 0) this.#push(entry.content!, padding(size));
    if (this.#bytes >= CHUNK_BYTES) await this.#flush();
  }

  /** Closes the archive and hands the rest to the sink. */
  async end(): Promise<void> {
    this.#push(ZEROS);
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
