/**
 * Writes and reads packs of small objects (pack-index.ts has the layout). Synchronous, so that the
 * object writer's thread and a restore's reads make no thread-pool round trip per object.
 *
 * Writing: the pack and its index are written to temporaries (`O_EXCL`, `O_NOFOLLOW`) in the
 * store's `tmp`, then renamed into `packs/`: the pack first, its index last. A pack is part of the
 * store once its index is there; a pack without one is litter a crash left (the GC's `litter`
 * kind). Durability is the commit's, as for loose objects: the `syncfs` before the trees are
 * written covers packs and indexes.
 *
 * Reading: one `pread` per object from a pack opened once (`O_NOFOLLOW`); an object whose bytes
 * are not all there (a truncated pack) fails typed, naming the pack.
 */
import { closeSync, constants, fstatSync, fsyncSync, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { StorageIoError } from '../errors/storage-io-error.js';
import { encodePackIndex, PACK_MAGIC, type PackedObject, type PackSlot } from './pack-index.js';

const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** The files of pack `packId` in `packsDir`. */
export function packFiles(packsDir: string, packId: string): { readonly pack: string; readonly index: string } {
  return { pack: `${packsDir}/${packId}.pack`, index: `${packsDir}/${packId}.idx` };
}

export interface WrittenPack {
  readonly packId: string;
  readonly objects: readonly PackedObject[];
  /** Bytes of the pack file. */
  readonly bytes: number;
}

/**
 * Writes `contents` (id → bytes, in the order given) as one pack into `packsDir`, through
 * temporaries named `tmpNames` + a suffix (unique to the caller); `durable`: each file is
 * fsynced before its rename (the caller then fsyncs `packsDir`). Returns the pack's id and where
 * each object lies. A pack that exists already (the same objects in the same order) is replaced
 * by the same bytes.
 */
export function writePackSync(packsDir: string, tmpNames: string, contents: readonly { readonly id: string; readonly bytes: Buffer }[], mode = 0o444, durable = false): WrittenPack {
  const objects: PackedObject[] = [];
  let offset = PACK_MAGIC.length;
  for (const { id, bytes } of contents) {
    objects.push({ id, offset, length: bytes.length });
    offset += bytes.length;
  }
  const index = encodePackIndex(objects, offset);
  const files = packFiles(packsDir, index.packId);
  const tmpPack = `${tmpNames}.pack`;
  const tmpIndex = `${tmpNames}.idx`;
  try {
    writeWhole(tmpPack, mode, [PACK_MAGIC, ...contents.map((c) => c.bytes)], durable);
    writeWhole(tmpIndex, mode, [index.bytes], durable);
    renameSync(tmpPack, files.pack);
    renameSync(tmpIndex, files.index);
  } catch (error) {
    for (const tmp of [tmpPack, tmpIndex]) {
      try {
        unlinkSync(tmp);
      } catch {
        // Not made, or renamed already.
      }
    }
    throw error;
  }
  return { packId: index.packId, objects, bytes: offset };
}

function writeWhole(file: string, mode: number, parts: readonly Buffer[], durable: boolean): void {
  const fd = openSync(file, CREATE, mode);
  try {
    for (const part of parts) for (let done = 0; done < part.length; ) done += writeSync(fd, part, done, part.length - done);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** An open pack, read object by object. */
export class PackReader {
  readonly #fd: number;
  readonly #size: number;

  private constructor(
    readonly file: string,
    fd: number,
  ) {
    this.#fd = fd;
    this.#size = fstatSync(fd).size;
  }

  /** Opens the pack file `file` (a regular file, not followed if a symlink) and checks its magic. */
  static open(file: string): PackReader {
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const reader = new PackReader(file, fd);
      const magic = Buffer.alloc(PACK_MAGIC.length);
      if (readSync(fd, magic, 0, magic.length, 0) !== magic.length || !magic.equals(PACK_MAGIC)) throw packDamage(file, 'not a pack (magic)');
      return reader;
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /** Bytes of the pack file when it was opened. */
  get size(): number {
    return this.#size;
  }

  /** Reads the object at `slot` into `target` at `offset` (room for `slot.length`). */
  readInto(slot: PackSlot, target: Buffer, offset: number): void {
    let read = 0;
    while (read < slot.length) {
      const n = readSync(this.#fd, target, offset + read, slot.length - read, slot.offset + read);
      if (n === 0) throw packDamage(this.file, `the pack ends at ${slot.offset + read}, inside an object of ${slot.length} bytes at ${slot.offset}`);
      read += n;
    }
  }

  /** The object at `slot`, in a buffer of its own. */
  read(slot: PackSlot): Buffer {
    const bytes = Buffer.allocUnsafe(slot.length);
    this.readInto(slot, bytes, 0);
    return bytes;
  }

  close(): void {
    closeSync(this.#fd);
  }
}

function packDamage(file: string, why: string): StorageIoError {
  return new StorageIoError({ operation: 'pack read', path: file, errno: 'EIO' }, why);
}
