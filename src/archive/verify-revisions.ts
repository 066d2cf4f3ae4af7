/**
 * Integrity check of an archive against its history (like `restic check --read-data`).
 *
 * Structure, always: every attached checkpoint record of a workspace (the checkpoint store is
 * authoritative) must have its revision directory and a manifest that parses, describes that
 * revision and agrees with the record's file count and bytes; `current` must point at an existing
 * revision, and at the attached head. Content, for a sample: every file of a committed revision
 * is re-hashed and compared with the manifest written at commit time (`sample` checks a random
 * subset of revisions, like `--read-data-subset`).
 *
 * Everything found wrong is a `VerifyProblem` naming workspace, revision and what is wrong.
 */
import type { Checkpoint, CheckpointStore } from '../state/checkpoint-store.js';
import type { ArchivePaths } from './archive-paths.js';
import type { ArchiveStore } from './archive-store.js';
import { inspectCurrentLink, inspectDirectory, inspectRevision, type RevisionState } from './inspect-revision.js';
import { verifyTree, type Mismatch, type RevisionManifest } from './manifest.js';

export interface RevisionCheck {
  readonly workspaceId: string;
  readonly revision: string;
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
] as const;
export type VerifyProblemCode = (typeof VERIFY_PROBLEMS)[number];

export interface VerifyProblem {
  readonly workspaceId: string;
  /** The revision concerned (the attached head for whole-workspace problems); null if none is known. */
  readonly revision: string | null;
  readonly problem: VerifyProblemCode;
  readonly detail: string;
}

export interface ArchiveVerification {
  /** Revisions whose content was re-hashed. */
  readonly checks: RevisionCheck[];
  readonly problems: VerifyProblem[];
  /** Attached checkpoint records checked against the archive. */
  readonly attached: number;
}

/** What the check reads: the archive and the checkpoint records. */
export interface VerifyDeps {
  readonly archive: ArchiveStore;
  readonly history: Pick<CheckpointStore, 'current' | 'attachedIds' | 'get'>;
}

export interface VerifyOptions {
  /** Fraction (0..1] of revisions whose content is re-hashed; 1 = all. Structure is always checked. */
  readonly sample?: number;
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
  let attached = 0;
  for (const workspaceId of workspaceIds) {
    const found = await checkWorkspace(deps, workspaceId, rootPresent, picked);
    problems.push(...found.problems);
    targets.push(...found.targets);
    attached += found.attached;
  }
  const checks: RevisionCheck[] = [];
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
    options.onRevision?.(check, checks.length, targets.length);
  }
  return { checks, problems, attached };
}

// Structure of one workspace: its attached records and `current` against the archive; returns what to re-hash.
async function checkWorkspace(deps: VerifyDeps, workspaceId: string, rootPresent: boolean, picked: () => boolean) {
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
    return { problems, targets: [], attached: records.length };
  }

  const states = new Map<string, RevisionState>();
  const inspect = async (revision: string) => {
    let state = states.get(revision);
    if (!state) states.set(revision, (state = await inspectRevision(paths, workspaceId, revision)));
    return state;
  };
  const authoritative = new Set<string>();
  for (const record of records) {
    const revision = record.workspaceRevision;
    authoritative.add(revision);
    const role = record.id === head?.id ? 'the attached head' : 'attached';
    const state = await inspect(revision);
    const found = structureProblems(state, `revision (${role})`);
    // A record forgotten by retention GC since it was listed is no longer history's claim.
    if (found.length > 0 && (await history.get(record.id))?.attachedAt == null) continue;
    for (const [problem, detail] of found) add(revision, problem, detail);
    const manifest = state.manifest.state === 'ok' ? state.manifest.manifest : null;
    if (manifest && (manifest.files !== record.files || manifest.bytes !== record.bytes)) {
      add(revision, 'record-mismatch', `checkpoint ${record.id} records ${record.files} files / ${record.bytes} bytes, the manifest ${manifest.files} / ${manifest.bytes}`);
    }
  }

  const link = await inspectCurrentLink(paths);
  if (link.state === 'absent') {
    if (headRevision) add(headRevision, 'current-missing', `${paths.current} does not exist; history's attached head is ${headRevision}`);
  } else if (link.state === 'invalid') {
    add(headRevision, 'current-invalid', link.reason);
  } else {
    authoritative.add(link.revision);
    const state = await inspect(link.revision);
    if (state.directory.state === 'missing') add(link.revision, 'current-dangling', `current points at revs/${link.revision}, which does not exist`);
    else if (!records.some((r) => r.workspaceRevision === link.revision)) {
      for (const [problem, detail] of structureProblems(state, 'revision (current)')) add(link.revision, problem, detail);
    }
    if (headRevision && link.revision !== headRevision && (await stillBehind(deps, workspaceId, link.revision, headRevision))) {
      add(link.revision, 'current-not-head', `current points at ${link.revision}, history's attached head is ${headRevision}`);
    }
  }

  // Content: committed revisions and everything authoritative, sampled.
  const targets: RehashTarget[] = [];
  for (const revision of new Set([...(await archive.revisions(workspaceId)), ...authoritative])) {
    if (!picked()) continue;
    const state = await inspect(revision);
    // Listed with its manifest a moment ago: if a part is missing now, GC removed it meanwhile.
    if (!authoritative.has(revision)) for (const [problem, detail] of structureProblems(state, 'committed revision')) if (!problem.endsWith('-missing')) add(revision, problem, detail);
    if (state.directory.state === 'present' && state.manifest.state === 'ok') {
      targets.push({ workspaceId, revision, manifest: state.manifest.manifest, authoritative: authoritative.has(revision) });
    }
  }
  return { problems, targets, attached: records.length };
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
  const records = await Promise.all(ids.map((id) => history.get(id)));
  return records.filter((c): c is Checkpoint => c !== null && c.attachedAt !== null && c.kind === 'portable_workspace');
}

// What is wrong with a revision's directory and manifest, as (problem, detail) pairs.
function structureProblems(state: RevisionState, what: string): [VerifyProblemCode, string][] {
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
    return { workspaceId, revision, ok: mismatches.length === 0 && !manifestCorrupt, files: manifest.files, mismatches, manifestCorrupt };
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
