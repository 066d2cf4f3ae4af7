/**
 * Is a sandbox listing the tree at one instant? `find` walks a live tree directory by directory,
 * so a listing taken while an agent writes can mix moments: a file renamed from a directory not
 * yet walked into one already walked is in neither, a delete seen in one directory while a write
 * before it in another is not. Every such change leaves a ctime newer than the walk's start: on
 * the file (written, renamed, its mode changed) or on its directory (an entry created, removed or
 * renamed). So when every listed entry's ctime, and every directory's ctime looked at again after
 * the walk (LIST_SCRIPT), is older than the clock read before the walk less the racily-clean
 * margin, nothing the listing shows changed between that clock and the end of the walk: it is the
 * tree at that instant. The margin covers the coarse clock the kernel stamps ctimes with; a tree
 * whose times have no sub-second part is judged with the coarse margin.
 *
 * The sandbox could set its clock to fake this; it would only tear its own checkpoints.
 */
import type { Listing } from '../../tree/listing.js';
import { settled } from './plan-delta.js';

export function listedAtOneInstant(listing: Listing, clockNs: bigint, dirsMoved: { readonly fine: boolean; readonly coarse: boolean }): boolean {
  if (listing.truncated) return false;
  let coarse = false;
  for (const entry of listing.entries.values()) {
    if (!settled(entry.ctimeNs, clockNs)) return false;
    if (entry.ctimeNs % 1_000_000_000n === 0n) coarse = true;
  }
  return !(coarse ? dirsMoved.coarse : dirsMoved.fine);
}
