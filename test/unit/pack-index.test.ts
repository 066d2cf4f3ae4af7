// The index of a pack (pack-index.ts): what it encodes is what it decodes and finds; an index that
// is damaged or planted (short, foreign, a checksum that does not match, a name that is not its
// content, records out of order or pointing outside the pack) is refused naming the file, even
// when its checksum was made to match.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SMALL_COPY_BYTES } from '../../src/archive/materialize-revision.js';
import { encodePackIndex, INDEX_MAGIC, MAX_PACKED_OBJECT_BYTES, PACK_MAGIC, PackIndex, packIndexBytes, type PackedObject } from '../../src/archive/pack-index.js';
import { TreeFormatError } from '../../src/archive/tree-object.js';

const id = (n: number) => createHash('sha256').update(`object ${n}`).digest('hex');

// Objects back to back after the magic, in the order given.
function layout(lengths: readonly number[]): { objects: PackedObject[]; packBytes: number } {
  let offset = PACK_MAGIC.length;
  const objects = lengths.map((length, n) => {
    const object = { id: id(n), offset, length };
    offset += length;
    return object;
  });
  return { objects, packBytes: offset };
}

// The index with its body changed by `edit` and its checksum made to match again.
function forged(bytes: Buffer, edit: (body: Buffer) => void): { bytes: Buffer; packId: string } {
  const body = Buffer.from(bytes.subarray(0, bytes.length - 32));
  edit(body);
  const digest = createHash('sha256').update(body).digest();
  return { bytes: Buffer.concat([body, digest]), packId: digest.toString('hex') };
}

describe('pack index', () => {
  it('finds every object it was given where it lies, and no other; lists them sorted by id', () => {
    const { objects, packBytes } = layout(Array.from({ length: 500 }, (_, n) => (n * 37) % 4_000));
    const { bytes, packId } = encodePackIndex(objects, packBytes);
    expect(bytes.subarray(0, 8)).toEqual(INDEX_MAGIC);
    expect(bytes.length).toBe(20 + 48 * 500 + 32);
    const index = PackIndex.decode(bytes, 'x.idx', packId);
    expect(index.count).toBe(500);
    expect(index.packBytes).toBe(packBytes);
    for (const object of objects) expect(index.find(object.id)).toEqual({ offset: object.offset, length: object.length });
    expect(index.find(id(500))).toBeUndefined();
    expect(index.find('zz')).toBeUndefined();
    const listed = [...index.objects()];
    expect(listed.map((o) => o.id)).toEqual(objects.map((o) => o.id).sort());
    expect(new Set(listed.map((o) => `${o.id}:${o.offset}:${o.length}`))).toEqual(new Set(objects.map((o) => `${o.id}:${o.offset}:${o.length}`)));
  });

  it('names a pack by its content: the same objects in the same order make the same id, another order another', () => {
    const { objects, packBytes } = layout([10, 20, 30]);
    expect(encodePackIndex(objects, packBytes).packId).toBe(encodePackIndex([...objects].reverse(), packBytes).packId);
    const moved = [{ ...objects[1]!, offset: 8 }, { ...objects[0]!, offset: 28 }, objects[2]!];
    expect(encodePackIndex(moved, packBytes).packId).not.toBe(encodePackIndex(objects, packBytes).packId);
    expect(encodePackIndex([], 8).packId).toMatch(/^[0-9a-f]{64}$/);
  });

  it('its encoder runs from its source alone (as the object writer\'s thread runs it) and writes the same bytes', () => {
    const { objects, packBytes } = layout([5, 0, 300, 17]);
    const isolated = new Function('Buffer', `return (${packIndexBytes.toString()});`)(Buffer) as typeof packIndexBytes;
    const sha = (body: Buffer) => createHash('sha256').update(body).digest();
    const bytes = isolated(objects.map((o) => o.id), objects.map((o) => o.offset), objects.map((o) => o.length), packBytes, sha);
    expect(bytes.equals(encodePackIndex(objects, packBytes).bytes)).toBe(true);
  });

  it('takes only objects a restore sends through tar (larger ones keep their reflinks and holes)', () => {
    expect(MAX_PACKED_OBJECT_BYTES).toBeLessThanOrEqual(SMALL_COPY_BYTES);
  });

  it('refuses to encode a bad id, an object twice or bytes outside the pack', () => {
    const { objects, packBytes } = layout([10, 20]);
    expect(() => encodePackIndex([{ ...objects[0]!, id: 'ABC' }], packBytes)).toThrow(/not an object id: "ABC"/);
    expect(() => encodePackIndex([objects[0]!, { ...objects[1]!, id: objects[0]!.id }], packBytes)).toThrow(/twice/);
    expect(() => encodePackIndex(objects, packBytes - 1)).toThrow(/outside the pack/);
    expect(() => encodePackIndex([{ ...objects[0]!, offset: 2 }], packBytes)).toThrow(/outside the pack/);
  });

  it('refuses an index that is short, foreign, damaged or not what its name says', () => {
    const { objects, packBytes } = layout([10, 20, 30]);
    const { bytes, packId } = encodePackIndex(objects, packBytes);
    const refused = (b: Buffer, name = packId) => {
      expect(() => PackIndex.decode(b, '/a/p.idx', name)).toThrow(TreeFormatError);
      try {
        PackIndex.decode(b, '/a/p.idx', name);
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    };
    expect(refused(bytes.subarray(0, 40))).toMatch(/^pack index \/a\/p\.idx: 40 bytes is too short/);
    expect(refused(Buffer.concat([Buffer.from('NOTANIDX'), bytes.subarray(8)]))).toMatch(/magic/);
    const flipped = Buffer.from(bytes);
    flipped.writeUInt8(flipped.readUInt8(30) ^ 1, 30);
    expect(refused(flipped)).toMatch(/checksum mismatch/);
    expect(refused(bytes.subarray(0, bytes.length - 1))).toMatch(/do not fit/);
    expect(refused(bytes, id(9))).toMatch(/its content is pack/);
  });

  it('refuses records out of order or outside the pack though the checksum matches (a planted index)', () => {
    const { objects, packBytes } = layout([10, 20, 30]);
    const { bytes } = encodePackIndex(objects, packBytes);
    const swapped = forged(bytes, (body) => {
      const first = Buffer.from(body.subarray(20, 68));
      body.subarray(68, 116).copy(body, 20);
      first.copy(body, 68);
    });
    expect(() => PackIndex.decode(swapped.bytes, 'p.idx', swapped.packId)).toThrow(/not sorted/);
    const beyond = forged(bytes, (body) => body.writeUInt32BE(1_000, 20 + 40));
    expect(() => PackIndex.decode(beyond.bytes, 'p.idx', beyond.packId)).toThrow(/outside the pack/);
    const intoMagic = forged(bytes, (body) => body.writeBigUInt64BE(0n, 20 + 32));
    expect(() => PackIndex.decode(intoMagic.bytes, 'p.idx', intoMagic.packId)).toThrow(/outside the pack/);
    const huge = forged(bytes, (body) => body.writeBigUInt64BE(2n ** 60n, 12));
    expect(() => PackIndex.decode(huge.bytes, 'p.idx', huge.packId)).toThrow(/out of range/);
  });
});
