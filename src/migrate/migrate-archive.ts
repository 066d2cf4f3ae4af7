/**
 * `fleet archive migrate`: converts the format 1 revisions of every workspace (or some) to
 * format 2, oldest first, one revision at a time (`migrateRevision`: its own locks, verified,
 * resumable). Plans from what is on disk, so a run that was killed picks up where it stopped:
 * converted revisions are not converted again, objects already stored are not written again.
 * A dry run reads manifests and reports what a run would do, writing nothing.
 */
import { readFile } from 'node:fs/promises';
import { parseManifestText } from '../archive/manifest-schema.js';
import { LockUnavailableError } from '../locks/lock-errors.js';
import { InodeObjects } from './inode-objects.js';
import { migrateRevision, type MigrateDeps, type RevisionReport } from './migrate-revision.js';
import { revisionParts, type RevisionParts } from './revision-parts.js';

export interface MigrateArchiveOptions {
  /** Workspaces to migrate (default: every workspace in the archive). */
  readonly workspaces?: readonly string[];
  readonly dryRun: boolean;
  readonly removeFormat1: boolean;
  readonly signal: AbortSignal;
  /** Each revision's report, as it is made. */
  readonly onRevision?: (report: PlannedReport, done: number, total: number) => void;
  /** Files of the revision being converted. */
  readonly onFile?: (workspaceId: string, revision: string, files: number, total: number) => void;
  readonly onWait?: (resource: string) => void;
}

/**
 * A revision a run did not migrate: what a dry run says it would do (convert it, or only finish
 * it: flip `current`, remove the format 1 copy), a manifest a dry run cannot trust, or a revision
 * whose workspace lock stayed held (deferred to the next run).
 */
export interface SkippedReport {
  readonly workspaceId: string;
  readonly revision: string;
  readonly outcome: 'would-convert' | 'would-finish' | 'manifest-invalid' | 'deferred';
  readonly files: number;
  readonly bytes: number;
  readonly detail?: string;
}

export type PlannedReport = RevisionReport | SkippedReport;

export interface MigrationReport {
  readonly dryRun: boolean;
  readonly workspaces: number;
  readonly revisions: readonly PlannedReport[];
  readonly converted: number;
  readonly alreadyConverted: number;
  /** Mismatches, untrusted manifests, workspaces whose lock stayed held (deferred). */
  readonly failed: number;
  readonly files: number;
  readonly bytes: number;
  readonly readFiles: number;
  readonly newObjects: number;
  readonly storedBytes: number;
  readonly removedFormat1: number;
  readonly currentFlipped: number;
  readonly durationMs: number;
  /** Files converted per second of the run. */
  readonly filesPerSecond: number;
}

interface Work {
  readonly workspaceId: string;
  readonly parts: RevisionParts;
  readonly currentFormat1: boolean;
}

// What a run has to do for one workspace: revisions to convert, and converted ones to finish.
async function planWorkspace(deps: MigrateDeps, workspaceId: string, removeFormat1: boolean): Promise<Work[]> {
  const link = await deps.archive.currentLink(workspaceId);
  const work: Work[] = [];
  for (const parts of await revisionParts(deps.archive, workspaceId)) {
    const currentFormat1 = link?.revision === parts.revision && link.format === 1;
    const toConvert = !parts.record && parts.directory && parts.manifest;
    const toFinish = parts.record && (currentFormat1 || (removeFormat1 && (parts.directory || parts.manifest)));
    if (toConvert || toFinish) work.push({ workspaceId, parts, currentFormat1 });
  }
  return work;
}

// A dry run's view of one revision (its manifest's counts).
async function dryReport(deps: MigrateDeps, work: Work): Promise<PlannedReport> {
  const { workspaceId, parts } = work;
  const base = { workspaceId, revision: parts.revision };
  if (parts.record) return { ...base, outcome: 'would-finish', files: 0, bytes: 0, detail: work.currentFormat1 ? 'current flips to its record' : 'format 1 copy removed' };
  const parsed = parseManifestText(await readFile(deps.archive.paths(workspaceId).manifest(parts.revision), 'utf8'), workspaceId, parts.revision);
  if (!parsed.ok) return { ...base, outcome: 'manifest-invalid', files: 0, bytes: 0, detail: `manifest ${parsed.reason}` };
  return { ...base, outcome: 'would-convert', files: parsed.manifest.files, bytes: parsed.manifest.bytes };
}

export async function migrateArchive(deps: MigrateDeps, options: MigrateArchiveOptions): Promise<MigrationReport> {
  const started = Date.now();
  const workspaces = options.workspaces ?? (await deps.archive.workspaces());
  const plan: Work[] = [];
  for (const workspaceId of workspaces) plan.push(...(await planWorkspace(deps, workspaceId, options.removeFormat1)));
  const inodes = new InodeObjects();
  const reports: PlannedReport[] = [];
  const deferred = new Set<string>();
  for (const work of plan) {
    options.signal.throwIfAborted();
    const { workspaceId, parts } = work;
    let report: PlannedReport;
    if (options.dryRun) report = await dryReport(deps, work);
    else if (deferred.has(workspaceId)) report = { workspaceId, revision: parts.revision, outcome: 'deferred', files: 0, bytes: 0, detail: 'a lock of the workspace stayed held' };
    else {
      try {
        report = await migrateRevision(deps, workspaceId, parts.revision, {
          removeFormat1: options.removeFormat1,
          inodes,
          signal: options.signal,
          onFile: (files, total) => options.onFile?.(workspaceId, parts.revision, files, total),
          ...(options.onWait ? { onWait: options.onWait } : {}),
        });
      } catch (error) {
        if (!(error instanceof LockUnavailableError)) throw error;
        // Busy past the wait (a long persist, a provisioning): the next run takes it.
        deferred.add(workspaceId);
        report = { workspaceId, revision: parts.revision, outcome: 'deferred', files: 0, bytes: 0, detail: error.message };
      }
    }
    reports.push(report);
    options.onRevision?.(report, reports.length, plan.length);
  }
  return summarize(options.dryRun, workspaces.length, reports, Date.now() - started);
}

// Totals over the reports.
function summarize(dryRun: boolean, workspaces: number, revisions: PlannedReport[], durationMs: number): MigrationReport {
  const sum = (pick: (r: RevisionReport) => number) => revisions.reduce((n, r) => n + ('readFiles' in r ? pick(r) : 0), 0);
  const files = sum((r) => (r.outcome === 'converted' ? r.files : 0));
  return {
    dryRun,
    workspaces,
    revisions,
    converted: revisions.filter((r) => r.outcome === 'converted').length,
    alreadyConverted: revisions.filter((r) => r.outcome === 'already-converted').length,
    failed: revisions.filter((r) => r.outcome === 'mismatch' || r.outcome === 'manifest-invalid' || r.outcome === 'deferred').length,
    files,
    bytes: sum((r) => (r.outcome === 'converted' ? r.bytes : 0)),
    readFiles: sum((r) => r.readFiles),
    newObjects: sum((r) => r.newObjects),
    storedBytes: sum((r) => r.storedBytes),
    removedFormat1: sum((r) => (r.removedFormat1 ? 1 : 0)),
    currentFlipped: sum((r) => (r.currentFlipped ? 1 : 0)),
    durationMs,
    filesPerSecond: durationMs > 0 ? Math.round((files * 1000) / durationMs) : 0,
  };
}
