/**
 * POSIX tar headers (pax interchange format, what `tar --format=pax` writes), pure: one entry's
 * header blocks, padding and the end of an archive. Names and link targets are raw bytes: up to
 * 100 bytes they go in the ustar fields as they are; longer ones go in a pax `path` / `linkpath`
 * record, with `hdrcharset=BINARY` when they are not UTF-8 (so readers keep the bytes instead of
 * converting them). A time with a fraction of a second, before 1970 or past the octal field, and a
 * size past 8 GiB, are pax records too. Owners are numbers with no names, 0 unless given (an
 * export is a tree, not a set of accounts; a restore through tar gives the workspace's uid), in
 * pax records when past the ustar fields' 7 octal digits.
 */

/** Size of a tar block. */
export const TAR_BLOCK = 512;
/** Two zero blocks end an archive. */
export const TAR_END = Buffer.alloc(2 * TAR_BLOCK);

export type TarType = 'file' | 'hardlink' | 'symlink' | 'dir' | 'fifo';

export interface TarHeader {
  /** Path inside the archive (bytes, '/'-separated, relative, no trailing slash). */
  readonly path: Buffer;
  readonly type: TarType;
  /** Permission bits (0o7777). */
  readonly mode: number;
  /** Content bytes (files only; 0 for the rest). */
  readonly size: number;
  readonly mtimeNs: bigint;
  /** Symlink target, or for a hard link the path of the entry it links to. */
  readonly linkpath?: Buffer;
  /** Owner (numbers). @default 0 */
  readonly uid?: number;
  readonly gid?: number;
}

const TYPEFLAG: Record<TarType, string> = { file: '0', hardlink: '1', symlink: '2', dir: '5', fifo: '6' };
const NAME_BYTES = 100;
/** The largest value of a 12-byte octal field (11 digits). */
const MAX_OCTAL_12 = 0o77777777777;
/** The largest value of an 8-byte octal field (7 digits). */
const MAX_OCTAL_8 = 0o7777777;
const NS = 1_000_000_000n;

// True when `bytes` are valid UTF-8 (they survive a decode and re-encode unchanged).
const isUtf8 = (bytes: Buffer) => Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes);

// Writes `value` as a NUL-terminated octal field of `length` bytes.
function octal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(value.toString(8).padStart(length - 1, '0'), offset, length - 1, 'latin1');
}

// A pax time: seconds with the nanoseconds as a fraction (trailing zeros dropped), negative before 1970.
export function paxTime(ns: bigint): string {
  const negative = ns < 0n;
  const abs = negative ? -ns : ns;
  const fraction = (abs % NS).toString().padStart(9, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / NS}${fraction ? `.${fraction}` : ''}`;
}

// One pax record `"<length> <key>=<value>\n"`, where the length counts the whole record.
function paxRecord(key: string, value: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(` ${key}=`), value, Buffer.from('\n')]);
  let length = body.length + 1;
  while (String(length).length + body.length !== length) length += 1;
  return Buffer.concat([Buffer.from(String(length)), body]);
}

// A ustar header block with its checksum.
function ustarBlock(name: Buffer, typeflag: string, mode: number, size: number, mtimeSeconds: number, linkname: Buffer, uid = 0, gid = 0): Buffer {
  const block = Buffer.alloc(TAR_BLOCK);
  name.copy(block, 0, 0, Math.min(name.length, NAME_BYTES));
  octal(block, 100, 8, mode);
  octal(block, 108, 8, Math.min(uid, MAX_OCTAL_8));
  octal(block, 116, 8, Math.min(gid, MAX_OCTAL_8));
  octal(block, 124, 12, size);
  octal(block, 136, 12, mtimeSeconds);
  block.fill(0x20, 148, 156);
  block.write(typeflag, 156, 1, 'latin1');
  linkname.copy(block, 157, 0, Math.min(linkname.length, NAME_BYTES));
  block.write('ustar\u000000', 257, 8, 'latin1');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'latin1');
  return block;
}

/** Zero bytes that pad `size` bytes of content to a whole block. */
export function tarPadding(size: number): Buffer {
  return Buffer.alloc((TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK);
}

/** The header blocks of one entry: a pax extended header when needed, then the ustar header. */
export function tarHeader(entry: TarHeader): Buffer {
  const name = entry.type === 'dir' ? Buffer.concat([entry.path, Buffer.from('/')]) : entry.path;
  const link = entry.linkpath ?? Buffer.alloc(0);
  const size = entry.type === 'file' ? entry.size : 0;
  const seconds = entry.mtimeNs / NS;
  const wholeSeconds = entry.mtimeNs % NS === 0n && seconds >= 0n && seconds <= BigInt(MAX_OCTAL_12);
  const records: Buffer[] = [];
  if (name.length > NAME_BYTES) records.push(paxRecord('path', name));
  if (link.length > NAME_BYTES) records.push(paxRecord('linkpath', link));
  if ((name.length > NAME_BYTES && !isUtf8(name)) || (link.length > NAME_BYTES && !isUtf8(link))) records.unshift(paxRecord('hdrcharset', Buffer.from('BINARY')));
  if (size > MAX_OCTAL_12) records.push(paxRecord('size', Buffer.from(String(size))));
  if (!wholeSeconds) records.push(paxRecord('mtime', Buffer.from(paxTime(entry.mtimeNs))));
  const uid = entry.uid ?? 0;
  const gid = entry.gid ?? 0;
  if (uid > MAX_OCTAL_8) records.push(paxRecord('uid', Buffer.from(String(uid))));
  if (gid > MAX_OCTAL_8) records.push(paxRecord('gid', Buffer.from(String(gid))));
  const mtimeField = seconds < 0n ? 0 : Number(seconds > BigInt(MAX_OCTAL_12) ? BigInt(MAX_OCTAL_12) : seconds);
  const ustar = ustarBlock(name, TYPEFLAG[entry.type], entry.mode & 0o7777, Math.min(size, MAX_OCTAL_12), mtimeField, link, uid, gid);
  if (records.length === 0) return ustar;
  const body = Buffer.concat(records);
  // The extended header's own name is informational (readers use the records); GNU tar's pattern.
  const paxName = Buffer.from('PaxHeaders/entry');
  return Buffer.concat([ustarBlock(paxName, 'x', 0o644, body.length, mtimeField, Buffer.alloc(0)), body, tarPadding(body.length), ustar]);
}
