/**
 * The check that makes a migration verified: the listing of the converted trees (what every
 * reader of format 2 will see) must equal the format 1 manifest written when the revision was
 * committed, path by path: type, mode, size, content hash (an object id is the SHA-256 of the
 * bytes read) and symlink target. Times are not compared (the manifest's are carried over).
 */
import type { ManifestEntry } from '../archive/manifest.js';

export interface ListingMismatch {
  readonly path: string;
  readonly problem: 'missing' | 'unexpected' | 'type' | 'mode' | 'size' | 'content' | 'target';
}

/** Every difference between the manifest's entries and the converted listing. */
export function compareListing(manifest: readonly ManifestEntry[], listing: readonly ManifestEntry[]): ListingMismatch[] {
  const expected = new Map(manifest.map((e) => [e.p, e]));
  const out: ListingMismatch[] = [];
  for (const got of listing) {
    const want = expected.get(got.p);
    expected.delete(got.p);
    if (!want) out.push({ path: got.p, problem: 'unexpected' });
    else if (want.t !== got.t) out.push({ path: got.p, problem: 'type' });
    else if (want.m !== got.m) out.push({ path: got.p, problem: 'mode' });
    else if (want.t === 'f' && want.s !== got.s) out.push({ path: got.p, problem: 'size' });
    else if (want.t === 'f' && want.h !== got.h) out.push({ path: got.p, problem: 'content' });
    else if (want.t === 'l' && want.l !== got.l) out.push({ path: got.p, problem: 'target' });
  }
  for (const path of expected.keys()) out.push({ path, problem: 'missing' });
  return out;
}
