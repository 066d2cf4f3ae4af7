/**
 * The previous revision's manifest indexed by directory, so a walk of the live tree can look up
 * each entry's previous state (the quick check) and find what the live tree no longer has (an
 * upload-only persist keeps it). Keys are the raw path bytes as latin1 strings: one character per
 * byte, so JavaScript's string order is the bytewise order of the walk.
 */
import type { ManifestEntry, RevisionManifest } from './manifest.js';
import { decodePath } from './tree-walk.js';

/** Directory key → (name key → entry). The root's key is `''`. */
export type PriorIndex = ReadonlyMap<string, ReadonlyMap<string, ManifestEntry>>;

const SLASH = 0x2f;

/** Bytes → index key. */
export const keyOf = (bytes: Buffer): string => bytes.toString('latin1');
/** Index key → bytes. */
export const bytesOf = (key: string): Buffer => Buffer.from(key, 'latin1');

/** Indexes a manifest's entries by their parent directory. */
export function indexManifest(manifest: RevisionManifest | null): PriorIndex {
  const index = new Map<string, Map<string, ManifestEntry>>();
  for (const entry of manifest?.entries ?? []) {
    const bytes = decodePath(entry.p);
    const slash = bytes.lastIndexOf(SLASH);
    const dir = slash < 0 ? '' : keyOf(bytes.subarray(0, slash));
    const name = keyOf(bytes.subarray(slash + 1));
    let children = index.get(dir);
    if (!children) index.set(dir, (children = new Map()));
    children.set(name, entry);
  }
  return index;
}

/** How many entries the indexed revision has below the directory `key` (0 when it has none). */
export function subtreeSize(index: PriorIndex, key: string): number {
  let n = 0;
  for (const [name, entry] of index.get(key) ?? []) n += 1 + (entry.t === 'd' ? subtreeSize(index, key === '' ? name : `${key}/${name}`) : 0);
  return n;
}
