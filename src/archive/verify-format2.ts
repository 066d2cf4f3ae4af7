/**
 * `fleet verify` for one format 2 revision: its record was parsed and checked against history
 * by verify-revisions.ts; here its trees and objects are checked (verify-store.ts, shared by
 * every revision of the run) and what is wrong becomes one problem per tree or object, by path.
 * A revision removed while it was checked (a GC at work) is not reported.
 */
import type { ArchiveStore } from './archive-store.js';
import { inWindow } from './id-window.js';
import type { RevisionRecord } from './revision-record.js';
import type { RevisionCheck, VerifyDeps, VerifyOptions, VerifyProblem } from './verify-revisions.js';
import { StoreChecker } from './verify-store.js';

/** Problems listed per revision; the last one says how many more there are. */
const MAX_PROBLEMS_PER_REVISION = 50;

export interface RecordTarget {
  readonly workspaceId: string;
  readonly revision: string;
  readonly record: RevisionRecord;
  /** Listed as attached or current. */
  readonly authoritative: boolean;
  /** The attached checkpoint naming it (null when only `current` does, or nothing). */
  readonly checkpointId: string | null;
}

/** The run's checker: objects are re-hashed when they fall in `readData` (all when absent). */
export function newStoreChecker(archive: ArchiveStore, options: Pick<VerifyOptions, 'readData' | 'signal'>): StoreChecker {
  const window = options.readData;
  return new StoreChecker(archive.objects, { readData: window ? (id) => inWindow(window, id) : () => true, ...(options.signal ? { signal: options.signal } : {}) });
}

/** The check of one revision and its problems; null when it went away while it was checked. */
export async function checkRecordTarget(checker: StoreChecker, deps: VerifyDeps, target: RecordTarget): Promise<{ check: RevisionCheck; problems: VerifyProblem[] } | null> {
  const { workspaceId, revision, record } = target;
  const findings = await checker.check(record.root);
  if (findings.length > 0 && (await goneMeanwhile(deps, target))) return null;
  const problems: VerifyProblem[] = findings.slice(0, MAX_PROBLEMS_PER_REVISION).map((f) => ({
    workspaceId,
    revision,
    problem: f.problem,
    detail: `${f.path === '' ? (f.id === record.root ? 'root tree' : '/') : f.path}: ${f.detail}`,
    object: f.id,
    path: f.path,
  }));
  if (findings.length > MAX_PROBLEMS_PER_REVISION) {
    const last = problems.at(-1)!;
    problems[problems.length - 1] = { ...last, detail: `${last.detail} (+${findings.length - MAX_PROBLEMS_PER_REVISION} more in this revision)` };
  }
  const check: RevisionCheck = { workspaceId, revision, format: 2, ok: findings.length === 0, files: record.files, mismatches: [], manifestCorrupt: false };
  return { check, problems };
}

// Whether the revision stopped being one while it was checked (its record removed, or its checkpoint forgotten).
async function goneMeanwhile(deps: VerifyDeps, target: RecordTarget): Promise<boolean> {
  const removed = await deps.archive.readRecord(target.workspaceId, target.revision).then((r) => r === null, () => false);
  if (removed) return true;
  return target.checkpointId !== null && (await deps.history.get(target.workspaceId, target.checkpointId))?.attachedAt == null;
}
