/**
 * POSIX tar headers (pax interchange format, what `tar --format=pax` writes), pure: one entry's
 * header blocks, padding and the end of an archive. Names and link targets are raw bytes: up to
 * 100 bytes they go in the ustar fields as they are; longer ones go in a pax `path` / `linkpath`
 * record, with `hdrcharset=BINARY` when they are not UTF-8 (so readers keep the bytes instead of
 * converting them). A time with a fraction of a second, before 1970 or past the octal field, and a
 * size past 8 GiB, are pax records too. Owners are numbers with no names, 0 unless given (an
 * export is a tree, not a set of accounts; a restore through tar gives the workspace's uid), in
 * pax records when past the ustar fields' 7 octal digits.
 *
 * The headers are written into the caller's buffer (`writeTarHeader`): a restore writes one or
 * two of them per file, and building each from small buffers and strings cost more than GNU tar
 * needs to make the file (BENCHMARKS.md, "Restore: headers written in place").
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

const TYPEFLAG: Record<TarType, number> = { file: 0x30, hardlink: 0x31, symlink: 0x32, dir: 0x35, fifo: 0x36 };
const PAX_TYPEFLAG = 0x78; // 'x'
const NAME_BYTES = 100;
/** The largest value of a 12-byte octal field (11 digits). */
const MAX_OCTAL_12 = 0o77777777777;
/** The largest value of an 8-byte octal field (7 digits). */
const MAX_OCTAL_8 = 0o7777777;
const NS = 1_000_000_000n;
const MAX_OCTAL_12_N = BigInt(MAX_OCTAL_12);
const SLASH = Buffer.from('/');
const NO_LINK = Buffer.alloc(0);
// The extended header's own name is informational (readers use the records); GNU tar's pattern.
const PAX_NAME = Buffer.from('PaxHeaders/entry');
// A ustar block before its fields: zeros, and the magic and version.
const USTAR_TEMPLATE = (() => {
  const block = Buffer.alloc(TAR_BLOCK);
  block.write('ustar\u000000', 257, 8, 'latin1');
  return block;
})();

// True when `bytes` are valid UTF-8 (they survive a decode and re-encode unchanged).
const isUtf8 = (bytes: Buffer) => Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes);

// Writes `value` as `digits` octal digits at `at` (the field's NUL after them is the template's).
function octal(target: Buffer, at: number, digits: number, value: number): void {
  for (let i = at + digits - 1; i >= at; i--) {
    target[i] = 0x30 + (value % 8);
    value = Math.floor(value / 8);
  }
}

// A pax time: seconds with the nanoseconds as a fraction (trailing zeros dropped), negative before 1970.
export function paxTime(ns: bigint): string {
  const negative = ns < 0n;
  const abs = negative ? -ns : ns;
  const fraction = (abs % NS).toString().padStart(9, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / NS}${fraction ? `.${fraction}` : ''}`;
}

// The length field of a pax record whose rest (`" key=value\n"`) is `body` bytes: it counts itself.
function recordLength(body: number): number {
  let length = body + 1;
  while (String(length).length + body !== length) length += 1;
  return length;
}

// One pax record `"<length> <key>=<value>\n"`, where the length counts the whole record.
function paxRecord(key: string, value: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(` ${key}=`), value, Buffer.from('\n')]);
  return Buffer.concat([Buffer.from(String(recordLength(body.length))), body]);
}

// A ustar header block with its checksum, at `at` of `target`.
function ustarBlock(target: Buffer, at: number, name: Buffer, typeflag: number, mode: number, size: number, mtimeSeconds: number, linkname: Buffer, uid: number, gid: number): void {
  USTAR_TEMPLATE.copy(target, at);
  name.copy(target, at, 0, Math.min(name.length, NAME_BYTES));
  octal(target, at + 100, 7, mode);
  octal(target, at + 108, 7, Math.min(uid, MAX_OCTAL_8));
  octal(target, at + 116, 7, Math.min(gid, MAX_OCTAL_8));
  octal(target, at + 124, 11, size);
  octal(target, at + 136, 11, mtimeSeconds);
  target.fill(0x20, at + 148, at + 156);
  target[at + 156] = typeflag;
  linkname.copy(target, at + 157, 0, Math.min(linkname.length, NAME_BYTES));
  let sum = 0;
  for (let i = at, end = at + TAR_BLOCK; i < end; i++) sum += target[i]!;
  octal(target, at + 148, 6, sum);
  target[at + 154] = 0;
}

/** Zero bytes that pad `size` bytes of content to a whole block. */
export function tarPadding(size: number): Buffer {
  return Buffer.alloc(paddingOf(size));
}

/** How many zero bytes pad `size` bytes of content to a whole block. */
export const paddingOf = (size: number): number => (TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK;

/**
 * Writes the header blocks of one entry (a pax extended header when needed, then the ustar
 * header) at `offset` of `target` and returns how many bytes they took. When they do not fit,
 * nothing is written and the answer is minus the bytes they need.
 */
export function writeTarHeader(target: Buffer, offset: number, entry: TarHeader): number {
  const name = entry.type === 'dir' ? Buffer.concat([entry.path, SLASH]) : entry.path;
  const link = entry.linkpath ?? NO_LINK;
  const size = entry.type === 'file' ? entry.size : 0;
  const seconds = entry.mtimeNs / NS;
  const wholeSeconds = entry.mtimeNs % NS === 0n && seconds >= 0n && seconds <= MAX_OCTAL_12_N;
  const uid = entry.uid ?? 0;
  const gid = entry.gid ?? 0;
  // The common extended header holds one record, the time: written as text, no buffers made.
  const onlyTime = !wholeSeconds && name.length <= NAME_BYTES && link.length <= NAME_BYTES && size <= MAX_OCTAL_12 && uid <= MAX_OCTAL_8 && gid <= MAX_OCTAL_8;
  const timeRecord = onlyTime ? ` mtime=${paxTime(entry.mtimeNs)}\n` : '';
  const records = onlyTime ? null : paxRecords(entry, name, link, size, wholeSeconds, uid, gid);
  const bodyBytes = onlyTime ? String(recordLength(timeRecord.length)).length + timeRecord.length : (records?.length ?? 0);
  const total = (bodyBytes > 0 ? TAR_BLOCK + bodyBytes + paddingOf(bodyBytes) : 0) + TAR_BLOCK;
  if (offset + total > target.length) return -total;

  const mtimeField = seconds < 0n ? 0 : Number(seconds > MAX_OCTAL_12_N ? MAX_OCTAL_12_N : seconds);
  let at = offset;
  if (bodyBytes > 0) {
    ustarBlock(target, at, PAX_NAME, PAX_TYPEFLAG, 0o644, bodyBytes, mtimeField, NO_LINK, 0, 0);
    at += TAR_BLOCK;
    if (records) records.copy(target, at);
    else target.write(`${recordLength(timeRecord.length)}${timeRecord}`, at, bodyBytes, 'latin1');
    at += bodyBytes;
    const padding = paddingOf(bodyBytes);
    target.fill(0, at, at + padding);
    at += padding;
  }
  ustarBlock(target, at, name, TYPEFLAG[entry.type], entry.mode & 0o7777, Math.min(size, MAX_OCTAL_12), mtimeField, link, uid, gid);
  return total;
}

// The pax records of an entry outside the common case (null: none).
function paxRecords(entry: TarHeader, name: Buffer, link: Buffer, size: number, wholeSeconds: boolean, uid: number, gid: number): Buffer | null {
  const records: Buffer[] = [];
  if (name.length > NAME_BYTES) records.push(paxRecord('path', name));
  if (link.length > NAME_BYTES) records.push(paxRecord('linkpath', link));
  if ((name.length > NAME_BYTES && !isUtf8(name)) || (link.length > NAME_BYTES && !isUtf8(link))) records.unshift(paxRecord('hdrcharset', Buffer.from('BINARY')));
  if (size > MAX_OCTAL_12) records.push(paxRecord('size', Buffer.from(String(size))));
  if (!wholeSeconds) records.push(paxRecord('mtime', Buffer.from(paxTime(entry.mtimeNs))));
  if (uid > MAX_OCTAL_8) records.push(paxRecord('uid', Buffer.from(String(uid))));
  if (gid > MAX_OCTAL_8) records.push(paxRecord('gid', Buffer.from(String(gid))));
  return records.length === 0 ? null : Buffer.concat(records);
}

/** How many bytes the header blocks of one entry take. */
export const tarHeaderBytes = (entry: TarHeader): number => -writeTarHeader(NO_LINK, 0, entry);

/** The header blocks of one entry, in a buffer of their own. */
export function tarHeader(entry: TarHeader): Buffer {
  const header = Buffer.allocUnsafe(tarHeaderBytes(entry));
  writeTarHeader(header, 0, entry);
  return header;
}
