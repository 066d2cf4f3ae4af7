/**
 * The part of a listing that needs no transfer: directories (created, modes set), symlinks
 * (their targets are in the listing) and FIFOs, applied to the mirror by directory handles in
 * listing order (parents first). Regular files are the delta's (apply-delta.ts).
 */
import { lutimes } from 'node:fs/promises';
import { sameMtime } from '../../tree/file-times.js';
import type { DirCursor } from '../../tree/dir-cursor.js';
import { makeFifo } from '../../tree/make-fifo.js';
import { dirMode, fifoMode } from './mirror-modes.js';
import type { ListedEntry, Listing } from './parse-listing.js';
import { splitRelative } from './safe-relative.js';
import type { MirrorSurvey } from './survey-mirror.js';

export interface ApplyListingOptions {
  readonly cursor: DirCursor;
  readonly listing: Listing;
  readonly survey: MirrorSurvey;
  /** New FIFOs made at most (each costs a mkfifo process); the rest are left out. */
  readonly maxNewFifos: number;
  readonly systemPath: string;
  readonly signal: AbortSignal;
}

export interface ListingOutcome {
  /** FIFOs left out over `maxNewFifos`. */
  readonly skippedFifos: number;
}

export async function applyListing(options: ApplyListingOptions): Promise<ListingOutcome> {
  let fifos = 0;
  let skippedFifos = 0;
  for (const entry of options.listing.entries.values()) {
    options.signal.throwIfAborted();
    if (entry.type === 'dir' || entry.type === 'closed-dir') await directory(options, entry);
    else if (entry.type === 'symlink') await link(options, entry);
    else if (entry.type === 'fifo') {
      const made = await fifo(options, entry, fifos < options.maxNewFifos);
      if (made === 'made') fifos += 1;
      if (made === 'skipped') skippedFifos += 1;
    }
  }
  return { skippedFifos };
}

// A directory: made when missing, its mode set when it differs.
async function directory({ cursor, survey }: ApplyListingOptions, entry: ListedEntry): Promise<void> {
  const have = survey.entries.get(entry.key);
  const mode = dirMode(entry.mode);
  if (have?.mode === mode) return;
  const { parent, name } = splitRelative(entry.rel);
  const dir = await cursor.at(parent);
  if (!have) await dir.mkdir(name, 0o700);
  const made = await dir.openDir(name);
  try {
    await made.chmod(mode);
  } finally {
    await made.close();
  }
}

// A symlink: made (again) unless the mirror has it with this target.
async function link({ cursor, survey }: ApplyListingOptions, entry: ListedEntry): Promise<void> {
  const have = survey.entries.get(entry.key);
  if (have?.target?.equals(entry.target!)) return;
  const { parent, name } = splitRelative(entry.rel);
  const dir = await cursor.at(parent);
  if (have) await dir.unlink(name);
  await dir.symlink(entry.target!, name);
}

// A FIFO: made (again) unless the mirror has it with this mode and time; its time set as listed.
async function fifo({ cursor, survey, systemPath, signal }: ApplyListingOptions, entry: ListedEntry, allowed: boolean): Promise<'kept' | 'made' | 'skipped'> {
  const have = survey.entries.get(entry.key);
  const mode = fifoMode(entry.mode);
  if (have && have.mode === mode && sameMtime(have.mtimeNs, entry.mtimeNs)) return 'kept';
  const { parent, name } = splitRelative(entry.rel);
  const dir = await cursor.at(parent);
  if (have) await dir.unlink(name);
  if (!allowed) return 'skipped';
  await makeFifo(dir, name, mode, systemPath, signal);
  const seconds = Number(entry.mtimeNs) / 1e9;
  await lutimes(dir.entry(name), seconds, seconds);
  return 'made';
}
