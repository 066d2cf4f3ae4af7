/**
 * Which files a persist must transfer, and what the mirror's index says afterwards (pure).
 *
 * A regular file needs no transfer when all of these hold (git's stat check, on both sides):
 * the index has it, the sandbox lists the very version the index recorded (size, mode, mtime,
 * ctime, inode, device: a rewrite whose mtime was put back still moves its ctime), and the
 * mirror's copy is still the one the fleet wrote (its inode and ctime, size, mode and mtime).
 * Anything else is transferred; a mirror copy that is not known to be the sandbox's (a damaged
 * mirror, a rebuild after a reboot) and could not be replaced is removed, so nothing the
 * sandbox never had is archived.
 *
 * Racily clean: a file whose ctime is not older than the sandbox's clock before it was archived
 * (minus a margin) could be rewritten after it was read within the same timestamp tick, leaving
 * its listing unchanged. It is taken, but not recorded in the index, so the next persist
 * transfers it again.
 */
import { sameMtime } from '../../tree/file-times.js';
import type { WrittenCopy } from './apply-delta.js';
import type { MirrorIndex, MirroredFile } from './mirror-index.js';
import { fileMode } from './mirror-modes.js';
import type { ListedEntry, Listing } from './parse-listing.js';
import { splitRelative } from './safe-relative.js';
import type { MirrorEntry, MirrorSurvey } from './survey-mirror.js';
import { keyOf } from '../../archive/prior-index.js';

/**
 * The margin of the racily-clean rule, on the sandbox's own clock. File times come from the
 * kernel's coarse clock, which ticks at least every 10 ms (HZ >= 100), so a write after the
 * archive began carries a ctime newer than (clock - one tick); twice that leaves room for the
 * coarse clock lagging the one `date` reads.
 */
export const SANDBOX_RACY_MARGIN_NS = 20_000_000n;
/** The margin for times with no sub-second part: filesystems that keep whole seconds (or two). */
export const COARSE_RACY_MARGIN_NS = 2_000_000_000n;

export interface DeltaPlan {
  /** Files to transfer, by key, in listing order. */
  readonly fetch: ReadonlyMap<string, ListedEntry>;
  /** Files left out because they are over the file-size limit. */
  readonly refused: ReadonlyMap<string, ListedEntry>;
  /** Files the mirror already holds, with their index rows. */
  readonly kept: ReadonlyMap<string, MirroredFile>;
}

export function planDelta(listing: Listing, index: MirrorIndex | null, survey: MirrorSurvey, maxFileBytes: number): DeltaPlan {
  const fetch = new Map<string, ListedEntry>();
  const refused = new Map<string, ListedEntry>();
  const kept = new Map<string, MirroredFile>();
  for (const entry of listing.entries.values()) {
    if (entry.type !== 'file') continue;
    const known = index?.get(entry.key);
    const have = survey.entries.get(entry.key);
    if (known && have && sameVersion(entry, known) && holds(have, known, entry)) kept.set(entry.key, known);
    else if (entry.size > maxFileBytes) refused.set(entry.key, entry);
    else fetch.set(entry.key, entry);
  }
  return { fetch, refused, kept };
}

/** What the index says once the delta is applied, and which mirror copies must go. */
export interface NextIndex {
  readonly index: Map<string, MirroredFile>;
  /** Keys of mirror copies that are not known to be the sandbox's and were not replaced. */
  readonly untrusted: readonly string[];
  /** Files written that are racily clean (transferred again next time). */
  readonly racy: number;
}

export function nextIndex(listing: Listing, index: MirrorIndex | null, survey: MirrorSurvey, plan: DeltaPlan, written: ReadonlyMap<string, WrittenCopy>, clockNs: bigint): NextIndex {
  const next = new Map(plan.kept);
  const untrusted: string[] = [];
  let racy = 0;
  for (const entry of [...plan.fetch.values(), ...plan.refused.values()]) {
    const copy = written.get(entry.key);
    if (copy) {
      if (settled(entry.ctimeNs, clockNs)) next.set(entry.key, { listed: entry, mirrorIno: copy.ino, mirrorCtimeNs: copy.ctimeNs });
      else racy += 1;
      continue;
    }
    // Not replaced (changed while archived, unreadable, over the size limit): the previous version stays if it is known.
    const known = index?.get(entry.key);
    const have = survey.entries.get(entry.key);
    if (known && have && holds(have, known, known.listed)) next.set(entry.key, known);
    else if (have) untrusted.push(entry.key);
  }
  // Files inside directories the sandbox could not read (not walked, kept whole), and everything
  // an incomplete listing does not name, keep their rows.
  for (const [key, known] of index ?? []) {
    if (!listing.entries.has(key) && (listing.truncated || underClosedDir(listing, key))) next.set(key, known);
  }
  return { index: next, untrusted, racy };
}

/** True when `ctimeNs` is older than the sandbox's `clockNs` by more than the racily-clean margin. */
export function settled(ctimeNs: bigint, clockNs: bigint): boolean {
  const margin = ctimeNs % 1_000_000_000n === 0n ? COARSE_RACY_MARGIN_NS : SANDBOX_RACY_MARGIN_NS;
  return ctimeNs + margin < clockNs;
}

// The sandbox lists the version the index recorded.
function sameVersion(entry: ListedEntry, known: MirroredFile): boolean {
  const v = known.listed;
  return entry.size === v.size && entry.mode === v.mode && entry.mtimeNs === v.mtimeNs && entry.ctimeNs === v.ctimeNs && entry.ino === v.ino && entry.dev === v.dev;
}

// The mirror's copy is the one the fleet wrote for `version`, untouched since.
function holds(have: MirrorEntry, known: MirroredFile, version: Pick<ListedEntry, 'size' | 'mode' | 'mtimeNs'>): boolean {
  return (
    have.type === 'file' &&
    have.ino === known.mirrorIno &&
    have.ctimeNs === known.mirrorCtimeNs &&
    have.size === version.size &&
    have.mode === fileMode(version.mode) &&
    sameMtime(have.mtimeNs, version.mtimeNs)
  );
}

// True when some ancestor of `key` is listed as a directory the sandbox could not read.
function underClosedDir(listing: Listing, key: string): boolean {
  for (let rel: Buffer = Buffer.from(key, 'latin1'); rel.length > 0; ) {
    rel = splitRelative(rel).parent;
    const entry = listing.entries.get(keyOf(rel));
    if (entry) return entry.type === 'closed-dir';
  }
  return false;
}
