/**
 * The index of a pack of small objects (format 2 packs; docs/archive-format.md, "Packs"): which
 * objects a pack holds and where. Pure encoding and lookup; pack-file.ts writes and reads packs.
 *
 * A pack (`{id}.pack`) is `PACK_MAGIC` then the objects' contents back to back, nothing between
 * them; its index (`{id}.idx`) is, all integers big-endian:
 *
 * | bytes | field |
 * |---|---|
 * | 8 | `INDEX_MAGIC` (`FLEETIX1`) |
 * | 4 | count of objects |
 * | 8 | size of the pack file in bytes |
 * | 48 × count | per object, sorted by id: id (32 raw bytes of the SHA-256), offset in the pack (8), length (4), 4 zero bytes |
 * | 32 | SHA-256 of every byte before it |
 *
 * The pack's id is the SHA-256 of its index without the trailer (hex): two writers that pack the
 * same objects in the same order make the same pack. An index is read as data that may be damaged
 * or planted: its trailer, its sorting, its bounds (every object inside the pack, none
 * overlapping the magic) are checked, and any failure is a `TreeFormatError` naming the file.
 */
import { createHash } from 'node:crypto';
import { OBJECT_ID_PATTERN, TreeFormatError } from './tree-object.js';

export const PACK_MAGIC = Buffer.from('FLEETPK1');
export const INDEX_MAGIC = Buffer.from('FLEETIX1');
const HEADER_BYTES = 8 + 4 + 8;
const RECORD_BYTES = 48;
const TRAILER_BYTES = 32;
/**
 * The largest object a pack takes: the ones a restore sends through tar (materialize-revision.ts
 * `SMALL_COPY_BYTES`); larger ones stay files of their own, copied by the kernel (reflinks, holes).
 */
export const MAX_PACKED_OBJECT_BYTES = 256 * 1024;
/** Objects one pack holds at most (an index of 48 MiB). */
export const MAX_PACK_OBJECTS = 1 << 20;

/** Where one object lies in its pack. */
export interface PackSlot {
  readonly offset: number;
  readonly length: number;
}

/** One object written into a pack, in pack order. */
export interface PackedObject extends PackSlot {
  /** Lower-case hex SHA-256 of the content. */
  readonly id: string;
}

export interface EncodedIndex {
  /** The index file's bytes. */
  readonly bytes: Buffer;
  /** The pack's id (hex). */
  readonly packId: string;
}

/** The index of a pack of `packBytes` bytes holding `objects` (any order; ids distinct). */
export function encodePackIndex(objects: readonly PackedObject[], packBytes: number): EncodedIndex {
  if (objects.length > MAX_PACK_OBJECTS) throw new RangeError(`a pack holds at most ${MAX_PACK_OBJECTS} objects, not ${objects.length}`);
  const seen = new Set<string>();
  for (const { id, offset, length } of objects) {
    if (!OBJECT_ID_PATTERN.test(id)) throw new TypeError(`not an object id: ${JSON.stringify(id)}`);
    if (seen.has(id)) throw new RangeError(`object ${id} is twice in one pack`);
    seen.add(id);
    checkSlot(offset, length, packBytes, () => `object ${id}`);
  }
  const bytes = packIndexBytes(
    objects.map((o) => o.id),
    objects.map((o) => o.offset),
    objects.map((o) => o.length),
    packBytes,
    (body) => createHash('sha256').update(body).digest(),
  );
  return { bytes, packId: bytes.toString('hex', bytes.length - TRAILER_BYTES) };
}

/**
 * The bytes of an index (the layout above) of checked records given as parallel arrays. It uses
 * nothing but its arguments and `Buffer`: the object writer's thread runs its source
 * (object-writer.ts), so that one encoder writes every index.
 */
export function packIndexBytes(ids: readonly string[], offsets: readonly number[], lengths: readonly number[], packBytes: number, sha256: (body: Buffer) => Buffer): Buffer {
  const order = ids.map((_, i) => i).sort((a, b) => (ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0));
  const body = Buffer.alloc(20 + 48 * ids.length);
  body.write('FLEETIX1', 0, 'latin1');
  body.writeUInt32BE(ids.length, 8);
  body.writeBigUInt64BE(BigInt(packBytes), 12);
  for (let k = 0; k < order.length; k++) {
    const i = order[k]!;
    const at = 20 + 48 * k;
    body.write(ids[i]!, at, 32, 'hex');
    body.writeBigUInt64BE(BigInt(offsets[i]!), at + 32);
    body.writeUInt32BE(lengths[i]!, at + 40);
  }
  return Buffer.concat([body, sha256(body)]);
}

/** A decoded index: lookups by id, in O(log n), without a map per object. */
export class PackIndex {
  private constructor(
    readonly packId: string,
    readonly packBytes: number,
    readonly count: number,
    /** The sorted records (HEADER and trailer cut off). */
    private readonly records: Buffer,
  ) {}

  /**
   * Decodes and checks `bytes`, the index named `file` (for errors); `packId` is the id its file
   * name claims, checked against its content.
   */
  static decode(bytes: Buffer, file: string, packId: string): PackIndex {
    const bad = (why: string) => new TreeFormatError(`pack index ${file}: ${why}`);
    if (bytes.length < HEADER_BYTES + TRAILER_BYTES) throw bad(`${bytes.length} bytes is too short`);
    if (!bytes.subarray(0, 8).equals(INDEX_MAGIC)) throw bad('not a pack index (magic)');
    const count = bytes.readUInt32BE(8);
    if (count > MAX_PACK_OBJECTS || bytes.length !== HEADER_BYTES + RECORD_BYTES * count + TRAILER_BYTES) throw bad(`${count} objects do not fit ${bytes.length} bytes`);
    const body = bytes.subarray(0, bytes.length - TRAILER_BYTES);
    const digest = createHash('sha256').update(body).digest();
    if (!digest.equals(bytes.subarray(bytes.length - TRAILER_BYTES))) throw bad('checksum mismatch');
    if (digest.toString('hex') !== packId) throw bad(`its content is pack ${digest.toString('hex')}, not ${packId}`);
    const packBigBytes = bytes.readBigUInt64BE(12);
    if (packBigBytes > BigInt(Number.MAX_SAFE_INTEGER)) throw bad('pack size out of range');
    const packBytes = Number(packBigBytes);
    const records = bytes.subarray(HEADER_BYTES, HEADER_BYTES + RECORD_BYTES * count);
    for (let i = 0; i < count; i++) {
      const at = i * RECORD_BYTES;
      if (i > 0 && Buffer.compare(records.subarray(at - RECORD_BYTES, at - RECORD_BYTES + 32), records.subarray(at, at + 32)) >= 0) throw bad(`records not sorted by id at ${i}`);
      const offset = records.readBigUInt64BE(at + 32);
      if (offset > BigInt(Number.MAX_SAFE_INTEGER)) throw bad(`object ${i}: offset out of range`);
      try {
        checkSlot(Number(offset), records.readUInt32BE(at + 40), packBytes, () => `object ${records.toString('hex', at, at + 32)}`);
      } catch (error) {
        throw bad((error as Error).message);
      }
    }
    return new PackIndex(packId, packBytes, count, records);
  }

  /** Where object `id` (hex) lies, or undefined when this pack does not hold it. */
  find(id: string): PackSlot | undefined {
    const key = Buffer.from(id, 'hex');
    if (key.length !== 32) return undefined;
    let low = 0;
    let high = this.count - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const at = mid * RECORD_BYTES;
      const order = Buffer.compare(this.records.subarray(at, at + 32), key);
      if (order === 0) return { offset: Number(this.records.readBigUInt64BE(at + 32)), length: this.records.readUInt32BE(at + 40) };
      if (order < 0) low = mid + 1;
      else high = mid - 1;
    }
    return undefined;
  }

  /** Every object of the pack, sorted by id. */
  *objects(): Generator<PackedObject> {
    for (let i = 0; i < this.count; i++) {
      const at = i * RECORD_BYTES;
      yield { id: this.records.toString('hex', at, at + 32), offset: Number(this.records.readBigUInt64BE(at + 32)), length: this.records.readUInt32BE(at + 40) };
    }
  }
}

// An object's bytes lie within the pack, after its magic.
function checkSlot(offset: number, length: number, packBytes: number, what: () => string): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || length < 0 || length > 0xffffffff) throw new RangeError(`${what()}: offset ${offset}, length ${length} out of range`);
  if (offset < PACK_MAGIC.length || offset + length > packBytes) throw new RangeError(`${what()}: bytes ${offset}-${offset + length} outside the pack of ${packBytes} bytes`);
}
