// Which pack holds an object (pack-lookup.ts), across many packs: every object is found in its
// pack and slot, ids that share their first 31 bits are told apart by their pack's index, an
// object packed twice is found, and an unknown id is not.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { encodePackIndex, PACK_MAGIC, PackIndex, type PackedObject } from '../../src/archive/pack-index.js';
import { PackLookup } from '../../src/archive/pack-lookup.js';

const hash = (text: string) => createHash('sha256').update(text).digest('hex');

function pack(ids: readonly string[]): { index: PackIndex; objects: PackedObject[] } {
  let offset = PACK_MAGIC.length;
  const objects = ids.map((id, n) => {
    const object = { id, offset, length: 10 + n };
    offset += object.length;
    return object;
  });
  const { bytes, packId } = encodePackIndex(objects, offset);
  return { index: PackIndex.decode(bytes, `${packId}.idx`, packId), objects };
}

describe('PackLookup', () => {
  it('finds each of 20,000 objects of 200 packs in its pack and slot, and no unknown id', () => {
    const lookup = new PackLookup();
    const packs = Array.from({ length: 200 }, (_, p) => pack(Array.from({ length: 100 }, (_, n) => hash(`${p}/${n}`))));
    for (const { index } of packs) lookup.add(index);
    expect(lookup.packs).toBe(200);
    for (const { index, objects } of packs) {
      for (const object of objects) {
        const found = lookup.find(object.id);
        expect(found?.index.packId).toBe(index.packId);
        expect(found?.slot).toEqual({ offset: object.offset, length: object.length });
      }
    }
    expect(lookup.find(hash('not packed'))).toBeUndefined();
    expect(lookup.find('not an id')).toBeUndefined();
  });

  it('tells apart ids that share their first 31 bits, in one pack or several; an object packed twice is found', () => {
    const prefix = 'abcdef01';
    const ids = [0, 1, 2, 3].map((n) => prefix + hash(`same key ${n}`).slice(8));
    const lookup = new PackLookup();
    const first = pack([ids[0]!, ids[1]!]);
    const second = pack([ids[2]!]);
    const third = pack([ids[3]!, ids[0]!]);
    for (const { index } of [first, second, third]) lookup.add(index);
    expect(lookup.find(ids[1]!)?.index.packId).toBe(first.index.packId);
    expect(lookup.find(ids[2]!)?.index.packId).toBe(second.index.packId);
    expect(lookup.find(ids[3]!)?.index.packId).toBe(third.index.packId);
    expect([first.index.packId, third.index.packId]).toContain(lookup.find(ids[0]!)?.index.packId);
    expect(lookup.find(`${prefix}${hash('none').slice(8)}`)).toBeUndefined();
  });

  it('adds a pack once', () => {
    const lookup = new PackLookup();
    const { index, objects } = pack([hash('a'), hash('b')]);
    lookup.add(index);
    lookup.add(index);
    expect(lookup.packs).toBe(1);
    expect(lookup.has(index.packId)).toBe(true);
    expect(lookup.find(objects[1]!.id)?.slot).toEqual({ offset: objects[1]!.offset, length: objects[1]!.length });
  });

  it('forgets a removed pack: an object it shared is found in the other, its own ones nowhere; added again, it is found again', () => {
    const lookup = new PackLookup();
    const shared = hash('in both');
    const a = pack([hash('only a'), shared]);
    const b = pack([shared, hash('only b')]);
    lookup.add(a.index);
    lookup.add(b.index);
    lookup.remove(a.index.packId);
    expect(lookup.packs).toBe(1);
    expect(lookup.has(a.index.packId)).toBe(false);
    expect(lookup.find(shared)?.index.packId).toBe(b.index.packId);
    expect(lookup.find(hash('only a'))).toBeUndefined();
    expect(lookup.find(hash('only b'))?.index.packId).toBe(b.index.packId);
    lookup.remove(b.index.packId);
    lookup.remove(b.index.packId);
    expect(lookup.packs).toBe(0);
    expect(lookup.find(shared)).toBeUndefined();
    lookup.add(a.index);
    expect(lookup.find(hash('only a'))?.index.packId).toBe(a.index.packId);
    expect(lookup.find(shared)?.index.packId).toBe(a.index.packId);
  });
});
