/**
 * Migrates one format 1 revision to format 2, under the workspace's persist lock (so no persist
 * or rollback of the workspace runs meanwhile):
 *
 *  1. convert its directory into objects and trees (`Format1Converter`);
 *  2. verify: the trees' listing must equal the manifest (`compareListing`), else the revision is
 *     left as it was and reported;
 *  3. make the objects and trees durable, then write the record under the same revision id
 *     (`writeDurableRecord`): from here every reader reads the record;
 *  4. under the provision lock too (provisioning and backfill flip `current` and restore from
 *     revision directories), flip `current` to the record if it named this revision's directory,
 *     and with `removeFormat1` remove the directory and manifest.
 *
 * Resumable: a revision that already has its record (a run stopped after step 3) is not
 * converted again; its listing is checked against its manifest once more, then step 4 runs.
 * Nothing in Redis changes: checkpoint records name revision ids, and the id is the same.
 */
import { readFile } from 'node:fs/promises';
import type { ArchiveStore } from '../archive/archive-store.js';
import { writeDurableRecord } from '../archive/commit-record.js';
import { parseManifestText } from '../archive/manifest-schema.js';
import type { RevisionManifest } from '../archive/manifest.js';
import { flattenTree } from '../archive/revision-reader.js';
import { RevisionRecordError } from '../archive/revision-record.js';
import { compareListing, type ListingMismatch } from './compare-listing.js';
import { Format1Converter, type Converted } from './convert-format1.js';
import { holdLock, type LockDeps } from './hold-lock.js';
import type { InodeObjects } from './inode-objects.js';
import { migratedRecord } from './migrated-record.js';
import { removeFormat1 } from './remove-format1.js';
import { partsOf } from './revision-parts.js';
import { anySignal } from '../lib/any-signal.js';

export interface MigrateDeps extends LockDeps {
  readonly archive: ArchiveStore;
  /** PATH for `sync`. */
  readonly systemPath: string;
}

export interface MigrateRevisionOptions {
  readonly removeFormat1: boolean;
  readonly inodes: InodeObjects;
  readonly signal: AbortSignal;
  /** Files converted so far of the revision's `total`. */
  readonly onFile?: (files: number, total: number) => void;
  /** A lock is held elsewhere (told once per lock). */
  readonly onWait?: (resource: string) => void;
}

export type RevisionOutcome = 'converted' | 'already-converted' | 'mismatch' | 'manifest-invalid' | 'vanished';

/** Mismatches kept in a report (the count is always complete). */
const SHOWN_MISMATCHES = 20;

export interface RevisionReport {
  readonly workspaceId: string;
  readonly revision: string;
  readonly outcome: RevisionOutcome;
  readonly files: number;
  readonly bytes: number;
  /** Files whose content was read (the others were known by their inode from an earlier revision). */
  readonly readFiles: number;
  readonly newObjects: number;
  readonly storedBytes: number;
  readonly newTrees: number;
  /** `current` named this revision's directory and now names its record. */
  readonly currentFlipped: boolean;
  readonly removedFormat1: boolean;
  readonly mismatchCount?: number;
  readonly mismatches?: readonly ListingMismatch[];
  readonly detail?: string;
  readonly durationMs: number;
}

const NOTHING = { files: 0, bytes: 0, readFiles: 0, newObjects: 0, storedBytes: 0, newTrees: 0 };

// The manifest of the revision, trusted only when it describes exactly this revision.
async function trustedManifest(archive: ArchiveStore, workspaceId: string, revision: string): Promise<RevisionManifest | string> {
  const text = await readFile(archive.paths(workspaceId).manifest(revision), 'utf8');
  const parsed = parseManifestText(text, workspaceId, revision);
  return parsed.ok ? parsed.manifest : parsed.reason;
}

export async function migrateRevision(deps: MigrateDeps, workspaceId: string, revision: string, options: MigrateRevisionOptions): Promise<RevisionReport> {
  const started = Date.now();
  const { archive } = deps;
  const report = (outcome: RevisionOutcome, extra: Partial<RevisionReport> = {}): RevisionReport => ({ workspaceId, revision, outcome, ...NOTHING, currentFlipped: false, removedFormat1: false, ...extra, durationMs: Date.now() - started });
  const failed = (outcome: 'mismatch' | 'manifest-invalid', mismatches: readonly ListingMismatch[], detail: string, extra: Partial<RevisionReport> = {}) =>
    report(outcome, { ...extra, mismatchCount: mismatches.length, mismatches: mismatches.slice(0, SHOWN_MISMATCHES), detail });

  return holdLock(
    deps,
    `persist:${workspaceId}`,
    async (lockSignal) => {
      const signal = anySignal([options.signal, lockSignal]);
      const parts = await partsOf(archive, workspaceId, revision);
      let converted: Converted | null = null;
      if (!parts.record) {
        if (!parts.directory || !parts.manifest) return report('vanished', { detail: 'its format 1 directory or manifest is gone (garbage collection?)' });
        const manifest = await trustedManifest(archive, workspaceId, revision);
        if (typeof manifest === 'string') return failed('manifest-invalid', [], `manifest ${manifest}`);
        const converter = new Format1Converter({ store: archive.objects, manifest, inodes: options.inodes, signal, onFile: (files) => options.onFile?.(files, manifest.files) });
        try {
          converted = await converter.convert(archive.paths(workspaceId).revision(revision));
        } catch (error) {
          const now = await partsOf(archive, workspaceId, revision);
          if (!now.directory || !now.manifest) return report('vanished', { detail: 'its format 1 directory or manifest went while it was read (garbage collection?)' });
          throw error;
        }
        const counts = { files: converted.files, bytes: converted.bytes, readFiles: converted.readFiles, newObjects: converted.newObjects, storedBytes: converted.storedBytes, newTrees: converted.newTrees };
        const mismatches = compareListing(manifest.entries, await flattenTree(archive.objects, converted.root));
        if (mismatches.length > 0) return failed('mismatch', mismatches, `${mismatches.length} difference(s) from its manifest; left in format 1`, counts);
        let record;
        try {
          record = migratedRecord(manifest, converted);
        } catch (error) {
          if (error instanceof RevisionRecordError) return failed('manifest-invalid', [], error.message, counts);
          throw error;
        }
        await writeDurableRecord(deps, record, { signal });
      } else if (parts.manifest) {
        // Converted by a run that stopped before it finished: the record's listing is checked again before anything else.
        const manifest = await trustedManifest(archive, workspaceId, revision);
        const record = (await archive.readRecord(workspaceId, revision))!;
        const mismatches = typeof manifest === 'string' ? [] : compareListing(manifest.entries, await flattenTree(archive.objects, record.root));
        if (mismatches.length > 0) return failed('mismatch', mismatches, `its record lists ${mismatches.length} difference(s) from its manifest; format 1 kept`);
      }
      const finished = await holdLock(deps, `provision:${workspaceId}`, async () => finish(archive, workspaceId, revision, options.removeFormat1), options.onWait);
      const outcome = converted ? 'converted' : 'already-converted';
      return report(outcome, converted ? { files: converted.files, bytes: converted.bytes, readFiles: converted.readFiles, newObjects: converted.newObjects, storedBytes: converted.storedBytes, newTrees: converted.newTrees, ...finished } : finished);
    },
    options.onWait,
  );
}

// Step 4: `current` to the record when it named the directory, then (optionally) the format 1 copy goes.
async function finish(archive: ArchiveStore, workspaceId: string, revision: string, remove: boolean): Promise<{ currentFlipped: boolean; removedFormat1: boolean }> {
  const link = await archive.currentLink(workspaceId);
  const currentFlipped = link?.revision === revision && link.format === 1;
  // flipCurrent points at the record (the format it finds for the id).
  if (currentFlipped) await archive.flipCurrent(workspaceId, revision);
  const parts = await partsOf(archive, workspaceId, revision);
  const removedFormat1 = remove && (parts.directory || parts.manifest);
  if (removedFormat1) await removeFormat1(archive, workspaceId, revision);
  return { currentFlipped, removedFormat1 };
}
