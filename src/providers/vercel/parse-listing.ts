/**
 * Parses a tree listing made inside a sandbox (`LISTING_RECORD`s, see tree-scripts.ts) without
 * trusting it: the sandbox's `find` may be anything the agent put there.
 *
 * - Every field is checked: the type letter, decimal size, octal mode (at most `0o7777`), times
 *   (seconds with up to ten decimals, exact to the nanosecond), inode and device numbers. A
 *   malformed record, or a path that is absolute or climbs out with `..`, refuses the whole
 *   listing (`UnsafeListingError`), exactly like an archive entry in extract rules.
 * - A path over the tree limits (bytes, depth), a second record for a path, an entry whose
 *   parent is not a directory listed before it, a symlink without a target (replaced while find
 *   read it), and sockets and devices are skipped and counted: a tree nested past PATH_MAX or
 *   changing while it is listed cannot make every persist fail.
 * - At most `maxEntries` entries are taken (`truncated` says there were more); the listing's
 *   uncompressed size is capped by the caller.
 */
import { UnsafeListingError } from '../../errors/unsafe-listing-error.js';
import type { TreeLimits } from '../../tree/tree-limits.js';
import { keyOf } from '../../archive/prior-index.js';
import { checkRelative, depthOf, splitRelative } from './safe-relative.js';
import type { ListedEntry, ListedType, Listing, ListingSkips } from '../../tree/listing.js';

export type { ListedEntry, ListedType, Listing, ListingSkips } from '../../tree/listing.js';
export { sameListed } from '../../tree/listing.js';

export interface ParseOptions {
  readonly limits: Pick<TreeLimits, 'maxPathBytes' | 'maxDepth' | 'maxEntries'>;
  /** Require every entry's parent to be a directory listed before it (a whole-tree listing). @default true */
  readonly requireParents?: boolean;
}

const TYPES: Readonly<Record<string, ListedType | 'special'>> = { f: 'file', d: 'dir', l: 'symlink', p: 'fifo', u: 'closed-dir', s: 'special', b: 'special', c: 'special', D: 'special' };
const NUMBER = /^\d{1,20}$/;
const TIME = /^(-?)(\d{1,20})(?:\.(\d{1,10}))?$/;
const MODE = /^[0-7]{1,6}$/;
// A symlink target longer than this cannot exist (PATH_MAX).
const MAX_TARGET_BYTES = 4095;
// The longest fields line a real find prints (type, 5 numbers of at most 20 digits, 2 times).
const MAX_FIELDS_BYTES = 200;

/** Parses a whole listing (the uncompressed stream). */
export async function parseListing(source: AsyncIterable<Buffer>, options: ParseOptions): Promise<Listing> {
  const builder = new ListingBuilder(options);
  for await (const record of records(source)) {
    if (!builder.add(record)) break;
  }
  return builder.done();
}

/** A field longer than this (no path within the limits, no target, no fields line is) is dropped unread. */
const MAX_FIELD_BYTES = 64 * 1024;

// A record: fields line, path, target; `null` stands for a field over `MAX_FIELD_BYTES`.
type RawRecord = readonly [Buffer | null, Buffer | null, Buffer | null];

// Splits the stream into records of three NUL-terminated fields, dropping overlong fields as
// they stream by (a path nested past PATH_MAX can be megabytes long).
async function* records(source: AsyncIterable<Buffer>): AsyncGenerator<RawRecord> {
  let pending: Buffer = Buffer.alloc(0);
  let dropping = false;
  const fields: (Buffer | null)[] = [];
  for await (const chunk of source) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let at = 0;
    for (let nul = pending.indexOf(0, at); nul >= 0; nul = pending.indexOf(0, at)) {
      fields.push(dropping || nul - at > MAX_FIELD_BYTES ? null : Buffer.from(pending.subarray(at, nul)));
      dropping = false;
      at = nul + 1;
      if (fields.length === 3) yield fields.splice(0, 3) as unknown as RawRecord;
    }
    pending = pending.subarray(at);
    if (pending.length > MAX_FIELD_BYTES) {
      dropping = true;
      pending = Buffer.alloc(0);
    }
  }
  if (pending.length > 0 || dropping || fields.length > 0) throw new UnsafeListingError('the listing ends inside a record', pending);
}

class ListingBuilder {
  readonly #entries = new Map<string, ListedEntry>();
  readonly #dirs = new Set<string>();
  readonly #skipped: ListingSkips = { special: 0, overLimit: 0, inconsistent: 0 };
  #truncated = false;

  constructor(private readonly options: ParseOptions) {}

  // Takes one record; false once the entry limit is reached.
  add([fields, path, target]: RawRecord): boolean {
    if (fields === null) throw new UnsafeListingError('the fields are too long', Buffer.alloc(0));
    const parsed = parseFields(fields);
    if (path === null) {
      this.#skipped.overLimit += 1;
      return true;
    }
    const checked = checkRelative(path);
    if (!checked.ok) throw new UnsafeListingError(`path ${checked.reason}`, path);
    const { rel } = checked;
    if (rel.length === 0) throw new UnsafeListingError('names the tree root itself', path);
    if (parsed.type === 'special') {
      this.#skipped.special += 1;
      return true;
    }
    const { limits } = this.options;
    if (rel.length > limits.maxPathBytes || depthOf(rel) > limits.maxDepth) {
      this.#skipped.overLimit += 1;
      return true;
    }
    const key = keyOf(rel);
    const parent = keyOf(splitRelative(rel).parent);
    if (this.#entries.has(key) || ((this.options.requireParents ?? true) && parent !== '' && !this.#dirs.has(parent))) {
      this.#skipped.inconsistent += 1;
      return true;
    }
    if (this.#entries.size >= limits.maxEntries) {
      this.#truncated = true;
      return false;
    }
    if (parsed.type === 'symlink' && (target === null || target.length > MAX_TARGET_BYTES)) throw new UnsafeListingError('symlink target is longer than PATH_MAX', target ?? Buffer.alloc(0));
    // An empty target: the link was replaced between find's lstat and its readlink (a live tree).
    if (parsed.type === 'symlink' && target!.length === 0) {
      this.#skipped.inconsistent += 1;
      return true;
    }
    const entry: ListedEntry = { ...parsed, type: parsed.type, rel, key, ...(parsed.type === 'symlink' ? { target: target! } : {}) };
    this.#entries.set(key, entry);
    if (parsed.type === 'dir') this.#dirs.add(key);
    return true;
  }

  done(): Listing {
    return { entries: this.#entries, skipped: this.#skipped, truncated: this.#truncated };
  }
}

// A record's fields line: an entry's stat facts, or a socket or device (skipped).
type Fields = Omit<ListedEntry, 'rel' | 'key' | 'type' | 'target'> & { readonly type: ListedType | 'special' };

// `<type> <size> <mode> <mtime> <ctime> <inode> <device>`, every field checked.
function parseFields(fields: Buffer): Fields {
  if (fields.length > MAX_FIELDS_BYTES) throw new UnsafeListingError('the fields are too long', fields);
  const parts = fields.toString('latin1').split(' ');
  const [type, size, mode, mtime, ctime, ino, dev] = parts;
  const kind = parts.length === 7 ? TYPES[type!] : undefined;
  if (kind === undefined) throw new UnsafeListingError('not a listing record (type and six fields)', fields);
  if (!NUMBER.test(size!) || !NUMBER.test(ino!) || !NUMBER.test(dev!) || !MODE.test(mode!)) throw new UnsafeListingError('a number field is malformed', fields);
  const bytes = Number(size);
  const bits = Number.parseInt(mode!, 8);
  if (!Number.isSafeInteger(bytes) || bits > 0o7777) throw new UnsafeListingError('size or mode out of range', fields);
  return { type: kind, size: bytes, mode: bits, mtimeNs: timeNs(mtime!, fields), ctimeNs: timeNs(ctime!, fields), ino: BigInt(ino!), dev: BigInt(dev!) };
}

// `-12.3456789012` seconds → nanoseconds (digits past the ninth decimal are dropped).
function timeNs(text: string, fields: Buffer): bigint {
  const match = TIME.exec(text);
  if (!match) throw new UnsafeListingError('a time field is malformed', fields);
  const ns = BigInt(match[2]!) * 1_000_000_000n + BigInt((match[3] ?? '').slice(0, 9).padEnd(9, '0'));
  return match[1] === '-' ? -ns : ns;
}

/** True when two listings describe the same version of an entry (type, size, mode, times, inode). */
