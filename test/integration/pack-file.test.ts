// Packs on a real filesystem (pack-file.ts): every object written reads back byte for byte
// through its index; the files are read-only and only the pack and its index remain; a pack
// reached through a symlink is not opened; a truncated pack fails typed naming the pack; a write
// that fails leaves no temporary behind.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { packFiles, PackReader, writePackSync } from '../../src/archive/pack-file.js';
import { PackIndex } from '../../src/archive/pack-index.js';
import { StorageIoError } from '../../src/errors/storage-io-error.js';
import { rng } from '../helpers/rng.js';

let root: string;
let packs: string;
let tmp: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'fleet-pack-'));
  packs = path.join(root, 'packs');
  tmp = path.join(root, 'tmp');
  mkdirSync(packs);
  mkdirSync(tmp);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function contents(count: number, seed: number) {
  const random = rng(seed);
  return Array.from({ length: count }, () => {
    const bytes = Buffer.alloc(Math.floor(random() * 20_000));
    for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
    return { id: createHash('sha256').update(bytes).digest('hex'), bytes };
  });
}

describe('pack files', () => {
  it('every object reads back byte for byte through the index; only the read-only pack and index remain', () => {
    const objects = contents(300, 1).concat({ id: createHash('sha256').update('').digest('hex'), bytes: Buffer.alloc(0) });
    const written = writePackSync(packs, path.join(tmp, 'p-1'), objects);
    const files = packFiles(packs, written.packId);
    expect(readdirSync(packs).sort()).toEqual([`${written.packId}.idx`, `${written.packId}.pack`]);
    expect(readdirSync(tmp)).toEqual([]);
    expect(statSync(files.pack).mode & 0o777).toBe(0o444);
    expect(statSync(files.pack).size).toBe(written.bytes);
    const index = PackIndex.decode(readFileSync(files.index), files.index, written.packId);
    const reader = PackReader.open(files.pack);
    try {
      for (const { id, bytes } of objects) {
        const slot = index.find(id);
        expect(slot).toBeDefined();
        expect(reader.read(slot!).equals(bytes)).toBe(true);
      }
      const target = Buffer.alloc(objects[5]!.bytes.length + 10, 0xee);
      reader.readInto(index.find(objects[5]!.id)!, target, 10);
      expect(target.subarray(10).equals(objects[5]!.bytes)).toBe(true);
      expect(target.subarray(0, 10).equals(Buffer.alloc(10, 0xee))).toBe(true);
    } finally {
      reader.close();
    }
  });

  it('does not open a pack through a symlink, nor a file that is not a pack', () => {
    const written = writePackSync(packs, path.join(tmp, 'p-1'), contents(3, 2));
    const link = path.join(root, 'link.pack');
    symlinkSync(packFiles(packs, written.packId).pack, link);
    expect(() => PackReader.open(link)).toThrow(expect.objectContaining({ code: 'ELOOP' }));
    expect(() => PackReader.open(packFiles(packs, written.packId).index)).toThrow(StorageIoError);
  });

  it('a truncated pack fails the read typed, naming the pack and where it ends', () => {
    const objects = contents(20, 3).filter((o) => o.bytes.length > 0);
    const written = writePackSync(packs, path.join(tmp, 'p-1'), objects);
    const files = packFiles(packs, written.packId);
    const last = written.objects.at(-1)!;
    truncateSync(files.pack, last.offset + 1);
    const reader = PackReader.open(files.pack);
    try {
      expect(reader.read(written.objects[0]!).equals(objects[0]!.bytes)).toBe(true);
      expect(() => reader.read(last)).toThrow(StorageIoError);
      expect(() => reader.read(last)).toThrow(new RegExp(`pack read ${files.pack}: the pack ends at ${last.offset + 1}, inside an object`));
    } finally {
      reader.close();
    }
  });

  it('a write that fails leaves no temporary behind', () => {
    rmSync(packs, { recursive: true });
    expect(() => writePackSync(packs, path.join(tmp, 'p-1'), contents(3, 4))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(readdirSync(tmp)).toEqual([]);
  });
});
