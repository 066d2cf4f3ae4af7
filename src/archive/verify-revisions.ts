/**
 * Integrity check of an archive against its history (like `restic check --read-data`).
 *
 * Structure, always: every attached checkpoint record of a workspace (the checkpoint store is
 * authoritative) must have its revision — format 1: a directory and a manifest that parses and
 * describes that revision; format 2: a revision record that parses and names it — agreeing with
 * the record's file count and bytes; `current` must point at an existing revision, and at the
 * attached head. Content: format 1, every file of a committed revision is re-hashed against the
 * manifest written at commit time (`sample` checks a random subset of revisions); format 2, every
 * tree reachable from a committed record is read and hashed, every reachable object must exist
 * with its size, and objects are re-hashed, each distinct one once per run (`readData` limits
 * the hashing to a window of the id space, like `--read-data-subset`; see verify-format2.ts).
 *
 * Everything found wrong is a `VerifyProblem` naming workspace, revision and what is wrong.
 */
import type { Checkpoint, CheckpointStore } from '../state/checkpoint-store.js';
import type { ArchivePaths } from './archive-paths.js';
import type { ArchiveStore } from './archive-store.js';
import type { IdWindow } from './id-window.js';
import { inspectCurrentLink, inspectDirectory, inspectRevision, revisionPresent, type RevisionState } from './inspect-revision.js';
import { verifyTree, type Mismatch, type RevisionManifest } from './manifest.js';
import { checkRecordTarget, newStoreChecker, type RecordTarget } from './verify-format2.js';
import { STORE_PROBLEMS, type StoreCheckStats } from './verify-store.js';

export interface RevisionCheck {
  readonly workspaceId: string;
  readonly revision: string;
  readonly format: 1 | 2;
  readonly ok: boolean;
  readonly files: number;
  readonly mismatches: readonly Mismatch[];
  /** The manifest's own treeHash disagrees with its entries (manifest tampered or torn). */
  readonly manifestCorrupt: boolean;
}

export const VERIFY_PROBLEMS = [
  /** The archive root is gone while history lists attached revisions. */
  'archive-missing',
  /** The workspace's archive directory is gone while history lists attached revisions. */
  'workspace-missing',
  'directory-missing',
  /** Something else than a readable directory is in the revision's place. */
  'directory-unreadable',
  'manifest-missing',
  /** Unparsable, not a format-1 manifest, another revision's, or its counts disagree with its entries. */
  'manifest-invalid',
  /** The checkpoint record's file count or bytes disagree with the manifest. */
  'record-mismatch',
  /** History has an attached head but `current` does not exist. */
  'current-missing',
  /** `current` is not a symlink to `revs/<revision>`. */
  'current-invalid',
  /** `current` points at a revision directory that does not exist. */
  'current-dangling',
  /** `current` points at another revision than the attached head. */
  'current-not-head',
  /** Re-hashing found files that differ from the manifest. */
  'content-mismatch',
  /** The files match the manifest's entries, but not its treeHash. */
  'manifest-corrupt',
  /** The revision's tree could not be read while re-hashing it. */
  'revision-unreadable',
  /** Format 2: neither the revision's record nor a format 1 directory or manifest exists. */
  'record-missing',
  /** Format 2: the record is unreadable, not a format 2 record, or another revision's. */
  'record-invalid',
  /** Format 2: a tree the revision reaches (`tree-*`) or an object (`object-*`) is gone, or its bytes do not match its id (or size). */
  ...STORE_PROBLEMS,
] as const;
export type VerifyProblemCode = (typeof VERIFY_PROBLEMS)[number];

export interface VerifyProblem {
  readonly workspaceId: string;
  /** The revision concerned (the attached head for whole-workspace problems); null if none is known. */
  readonly revision: string | null;
  readonly problem: VerifyProblemCode;
  readonly detail: string;
  /** Format 2: the tree or object concerned. */
  readonly object?: string;
  /** Format 2: where in the revision (empty for its root tree). */
  readonly path?: string;
}

export interface ArchiveVerification {
  /** Revisions whose content was re-hashed. */
  readonly checks: RevisionCheck[];
  readonly problems: VerifyProblem[];
  /** Attached checkpoint records checked against the archive. */
  readonly attached: number;
  /** Format 2: distinct trees and objects checked, objects read. */
  readonly store: StoreCheckStats;
}

/** What the check reads: the archive and the checkpoint records. */
export interface VerifyDeps {
  readonly archive: ArchiveStore;
  readonly history: Pick<CheckpointStore, 'current' | 'attachedIds' | 'get'>;
}

export interface VerifyOptions {
  /**
   * Fraction (0..1] of format 1 revisions whose content is re-hashed; 1 = all. Structure is
   * always checked. Format 2 revisions share their trees and objects, so each is checked once
   * per run whatever the sample (see `readData`).
   */
  readonly sample?: number;
  /** Format 2: re-hash only objects whose id falls in this window (every object exists-and-size is still checked). @default every object */
  readonly readData?: IdWindow;
  /** What a revision with nothing at all on disk is reported as: format 1's `directory-missing` and `manifest-missing`, or format 2's `record-missing` (the format the fleet writes). @default 1 */
  readonly missingFormat?: 1 | 2;
  readonly signal?: AbortSignal;
  readonly onRevision?: (check: RevisionCheck, done: number, total: number) => void;
  readonly random?: () => number;
}

interface RehashTarget {
  readonly workspaceId: string;
  readonly revision: string;
  readonly manifest: RevisionManifest;
  /** Listed as attached or current: a vanished tree is a problem, not a concurrent GC. */
  readonly authoritative: boolean;
}

export async function verifyRevisions(deps: VerifyDeps, workspaceIds: readonly string[], options: VerifyOptions = {}): Promise<ArchiveVerification> {
  const sample = options.sample ?? 1;
  const random = options.random ?? Math.random;
  const picked = () => sample >= 1 || random() < sample;
  const rootPresent = (await inspectDirectory(deps.archive.root)).state === 'present';
  const problems: VerifyProblem[] = [];
  const targets: RehashTarget[] = [];
  const recordTargets: RecordTarget[] = [];
  let attached = 0;
  for (const workspaceId of workspaceIds) {
    const found = await checkWorkspace(deps, workspaceId, rootPresent, picked, options.missingFormat ?? 1);
    problems.push(...found.problems);
    targets.push(...found.targets);
    recordTargets.push(...found.records);
    attached += found.attached;
  }
  const checks: RevisionCheck[] = [];
  const total = targets.length + recordTargets.length;
  for (const target of targets) {
    const check = await rehash(deps.archive.paths(target.workspaceId), target, options.signal);
    if (check instanceof Error) {
      if (target.authoritative || (check as NodeJS.ErrnoException).code !== 'ENOENT') {
        problems.push({ workspaceId: target.workspaceId, revision: target.revision, problem: 'revision-unreadable', detail: `re-hashing failed (${(check as NodeJS.ErrnoException).code ?? check.name})` });
      }
      continue;
    }
    checks.push(check);
    problems.push(...contentProblems(check));
    options.onRevision?.(check, checks.length, total);
  }
  const checker = newStoreChecker(deps.archive, options);
  for (const target of recordTargets) {
    const found = await checkRecordTarget(checker, deps, target);
    if (!found) continue;
    checks.push(found.check);
    problems.push(...found.problems);
    options.onRevision?.(found.check, checks.length, total);
  }
  return { checks, problems, attached, store: checker.stats };
}

// Structure of one workspace: its attached records and `current` against the archive; returns what to re-hash.
async function checkWorkspace(deps: VerifyDeps, workspaceId: string, rootPresent: boolean, picked: () => boolean, missingFormat: 1 | 2) {
  const { archive, history } = deps;
  const paths = archive.paths(workspaceId);
  const problems: VerifyProblem[] = [];
  const head = await history.current(workspaceId);
  const records = await attachedRecords(history, workspaceId, head);
  const headRevision = head?.kind === 'portable_workspace' ? head.workspaceRevision : null;
  const add = (revision: string | null, problem: VerifyProblemCode, detail: string) => problems.push({ workspaceId, revision, problem, detail });

  if ((await inspectDirectory(paths.dir)).state !== 'present') {
    if (records.length > 0) {
      const listed = `history lists ${records.length} attached revision(s)`;
      if (rootPresent) add(headRevision ?? records.at(-1)!.workspaceRevision, 'workspace-missing', `archive directory ${paths.dir} does not exist; ${listed}`);
      else add(headRevision ?? records.at(-1)!.workspaceRevision, 'archive-missing', `archive root ${archive.root} does not exist; ${listed}`);
    }
    return { problems, targets: [], records: [], attached: records.length };
  }

  const states = new Map<string, RevisionState>();
  const inspect = async (revision: string) => {
    let state = states.get(revision);
    if (!state) states.set(revision, (state = await inspectRevision(paths, workspaceId, revision)));
    return state;
  };
  const authoritative = new Map<string, string | null>();
  for (const record of records) {
    const revision = record.workspaceRevision;
    authoritative.set(revision, record.id);
    const role = record.id === head?.id ? 'the attached head' : 'attached';
    const state = await inspect(revision);
    const found = structureProblems(state, `revision (${role})`, missingFormat);
    // A record forgotten by retention GC since it was listed is no longer history's claim.
    if (found.length > 0 && (await history.get(workspaceId, record.id))?.attachedAt == null) continue;
    for (const [problem, detail] of found) add(revision, problem, detail);
    const counts = state.record.state === 'ok' ? { ...state.record.record, what: 'the revision record' } : state.manifest.state === 'ok' ? { ...state.manifest.manifest, what: 'the manifest' } : null;
    if (counts && (counts.files !== record.files || counts.bytes !== record.bytes)) {
      add(revision, 'record-mismatch', `checkpoint ${record.id} records ${record.files} files / ${record.bytes} bytes, ${counts.what} ${counts.files} / ${counts.bytes}`);
    }
  }

  const link = await inspectCurrentLink(paths);
  if (link.state === 'absent') {
    if (headRevision) add(headRevision, 'current-missing', `${paths.current} does not exist; history's attached head is ${headRevision}`);
  } else if (link.state === 'invalid') {
    add(headRevision, 'current-invalid', link.reason);
  } else {
    if (!authoritative.has(link.revision)) authoritative.set(link.revision, null);
    const state = await inspect(link.revision);
    const target = paths.currentTarget(link.revision, link.format);
    if (link.format === 2 ? state.record.state === 'missing' : state.directory.state === 'missing') add(link.revision, 'current-dangling', `current points at ${target}, which does not exist`);
    else if (!records.some((r) => r.workspaceRevision === link.revision)) {
      for (const [problem, detail] of structureProblems(state, 'revision (current)', missingFormat)) add(link.revision, problem, detail);
    }
    if (headRevision && link.revision !== headRevision && (await stillBehind(deps, workspaceId, link.revision, headRevision))) {
      add(link.revision, 'current-not-head', `current points at ${link.revision}, history's attached head is ${headRevision}`);
    }
  }

  // Content: committed revisions and everything authoritative (format 1 sampled; format 2 each tree and object once).
  const targets: RehashTarget[] = [];
  const recordTargets: RecordTarget[] = [];
  for (const revision of new Set([...(await archive.revisions(workspaceId)), ...authoritative.keys()])) {
    const state = await inspect(revision);
    const listed = authoritative.has(revision);
    if (state.record.state === 'ok') {
      recordTargets.push({ workspaceId, revision, record: state.record.record, authoritative: listed, checkpointId: authoritative.get(revision) ?? null });
      continue;
    }
    if (!picked()) continue;
    // Listed with its manifest a moment ago: if a part is missing now, GC removed it meanwhile.
    if (!listed) for (const [problem, detail] of structureProblems(state, 'committed revision', missingFormat)) if (!problem.endsWith('-missing')) add(revision, problem, detail);
    if (state.directory.state === 'present' && state.manifest.state === 'ok') {
      targets.push({ workspaceId, revision, manifest: state.manifest.manifest, authoritative: listed });
    }
  }
  return { problems, targets, records: recordTargets, attached: records.length };
}

// Whether `current` still trails the head when both are read again (a persist flips `current` right after its attach).
async function stillBehind(deps: VerifyDeps, workspaceId: string, linked: string, headRevision: string): Promise<boolean> {
  const head = await deps.history.current(workspaceId);
  const link = await inspectCurrentLink(deps.archive.paths(workspaceId));
  return head?.workspaceRevision === headRevision && link.state === 'link' && link.revision === linked;
}

// Attached portable checkpoint records in attach order (the head included even if the index lacks it).
async function attachedRecords(history: VerifyDeps['history'], workspaceId: string, head: Checkpoint | null): Promise<Checkpoint[]> {
  const ids = await history.attachedIds(workspaceId);
  if (head && !ids.includes(head.id)) ids.push(head.id);
  const records = await Promise.all(ids.map((id) => history.get(workspaceId, id)));
  return records.filter((c): c is Checkpoint => c !== null && c.attachedAt !== null && c.kind === 'portable_workspace');
}

// What is wrong with a revision's record, or its directory and manifest, as (problem, detail) pairs.
function structureProblems(state: RevisionState, what: string, missingFormat: 1 | 2): [VerifyProblemCode, string][] {
  if (state.record.state === 'ok') return [];
  if (state.record.state === 'invalid') return [['record-invalid', `${what}: record ${state.record.reason}`]];
  if (missingFormat === 2 && !revisionPresent(state)) return [['record-missing', `${what}: neither its record nor a format 1 directory or manifest exists`]];
  const out: [VerifyProblemCode, string][] = [];
  if (state.directory.state === 'missing') out.push(['directory-missing', `${what}: directory does not exist`]);
  if (state.directory.state === 'unreadable') out.push(['directory-unreadable', `${what}: directory ${state.directory.reason}`]);
  if (state.manifest.state === 'missing') out.push(['manifest-missing', `${what}: manifest does not exist`]);
  if (state.manifest.state === 'invalid') out.push(['manifest-invalid', `${what}: manifest ${state.manifest.reason}`]);
  return out;
}

// Re-hashes one revision; an error reading the tree is returned, not thrown.
async function rehash(paths: ArchivePaths, target: RehashTarget, signal?: AbortSignal): Promise<RevisionCheck | Error> {
  const { workspaceId, revision, manifest } = target;
  try {
    const { mismatches, treeHash } = await verifyTree(paths.revision(revision), manifest, signal);
    const manifestCorrupt = mismatches.length === 0 && treeHash !== manifest.treeHash;
    return { workspaceId, revision, format: 1, ok: mismatches.length === 0 && !manifestCorrupt, files: manifest.files, mismatches, manifestCorrupt };
  } catch (error) {
    if (signal?.aborted || !(error instanceof Error) || (error as NodeJS.ErrnoException).code === undefined) throw error;
    return error;
  }
}

// The problems a content check found.
function contentProblems(check: RevisionCheck): VerifyProblem[] {
  const { workspaceId, revision } = check;
  if (check.mismatches.length > 0) {
    const shown = check.mismatches.slice(0, 5).map((m) => `${m.problem}:${m.path}`).join(' ');
    const more = check.mismatches.length > 5 ? ` (+${check.mismatches.length - 5} more)` : '';
    return [{ workspaceId, revision, problem: 'content-mismatch', detail: `${check.mismatches.length} difference(s) from the manifest: ${shown}${more}` }];
  }
  if (check.manifestCorrupt) return [{ workspaceId, revision, problem: 'manifest-corrupt', detail: "the files match the manifest's entries but not its treeHash" }];
  return [];
}
