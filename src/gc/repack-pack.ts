/**
 * Repacks a pack most of whose object bytes no revision reaches (sweep-store.ts finds it): its
 * reachable objects are read from it, each checked against its id, and written durably as a new
 * pack (ObjectStore `writePackDurably`); only then is the old pack removed, as an unreachable
 * pack is (set aside, its mtime read again, put back if a writer reused it since: then both stay,
 * and an object in two packs is read from either).
 *
 * A reader that still knows the old pack finds it gone and looks again (ObjectStore: the packs
 * listed again hold the new one). A GC that dies at any step leaves either both packs (the next
 * run repacks again into the same new pack, same bytes) or the old index set aside, which
 * `recoverQuarantined` puts back while its pack is there.
 */
import type { ObjectStore } from '../archive/object-store.js';
import { sha256 } from '../archive/tree-object.js';
import { errnoOf } from '../errors/classify-storage-error.js';
import { readEntry, removeUnreachable, withDir, type Removal, type StoreCandidate } from './sweep-store.js';

/** Larger than any pack a writer makes (a batch is 512 KiB): a pack file this big is not read, and not repacked. */
const MAX_PACK_BYTES = 8 * 1024 * 1024;

export async function repackPack(store: ObjectStore, candidate: StoreCandidate & { readonly live: NonNullable<StoreCandidate['live']> }): Promise<Removal> {
  const bytes = await readPack(store, candidate.id);
  if (bytes === null) return 'gone';
  if (bytes === 'too-large') return 'damaged';
  const contents: { id: string; bytes: Buffer }[] = [];
  for (const object of candidate.live) {
    const end = object.offset + object.length;
    const slice = bytes.subarray(object.offset, end);
    // A pack cut short or changed: nothing is moved (`fleet verify` names the object).
    if (end > bytes.length || sha256(slice) !== object.id) return 'damaged';
    contents.push({ id: object.id, bytes: slice });
  }
  await store.writePackDurably(contents);
  const { live: _moved, ...whole } = candidate;
  return removeUnreachable(store, whole);
}

// The pack file whole (a pack is at most a writer's batch), opened without following; null when it is gone.
async function readPack(store: ObjectStore, packId: string): Promise<Buffer | 'too-large' | null> {
  try {
    return (await withDir(store.packs.packsDir, (packs) => readEntry(packs, Buffer.from(`${packId}.pack`), MAX_PACK_BYTES))) ?? null;
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return null;
    throw error;
  }
}
