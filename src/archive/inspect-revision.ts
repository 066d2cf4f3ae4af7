/**
 * What is on disk for one revision and for `current`, without trusting any of it: the
 * directory may be gone, the manifest or the format 2 record missing, torn or someone else's,
 * the link dangling. Read-only; errors other than "not there" become a reason (by errno code),
 * never a throw.
 */
import { lstat, readFile, readlink } from 'node:fs/promises';
import { RECORD_SUFFIX, REVISION_ID_PATTERN, type ArchivePaths } from './archive-paths.js';
import type { RevisionManifest } from './manifest.js';
import { parseManifestText } from './manifest-schema.js';
import { parseRevisionRecord, RevisionRecordError, type RevisionRecord } from './revision-record.js';

export type DirectoryState = { readonly state: 'present' } | { readonly state: 'missing' } | { readonly state: 'unreadable'; readonly reason: string };

export type ManifestState =
  | { readonly state: 'ok'; readonly manifest: RevisionManifest }
  | { readonly state: 'missing' }
  | { readonly state: 'invalid'; readonly reason: string };

export type RecordState =
  | { readonly state: 'ok'; readonly record: RevisionRecord }
  | { readonly state: 'missing' }
  | { readonly state: 'invalid'; readonly reason: string };

export interface RevisionState {
  /** Format 1: the revision's tree. */
  readonly directory: DirectoryState;
  /** Format 1: its manifest. */
  readonly manifest: ManifestState;
  /** Format 2: its revision record. */
  readonly record: RecordState;
}

export type CurrentLink =
  | { readonly state: 'absent' }
  /** `current` exists but is not a symlink to `revs/<revision id>`. */
  | { readonly state: 'invalid'; readonly reason: string }
  | { readonly state: 'link'; readonly revision: string; readonly format: 1 | 2 };

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException).code ?? 'unknown error';

/** The directory, manifest and record of `revision`. */
export async function inspectRevision(paths: ArchivePaths, workspaceId: string, revision: string): Promise<RevisionState> {
  return {
    directory: await inspectDirectory(paths.revision(revision)),
    manifest: await inspectManifest(paths.manifest(revision), workspaceId, revision),
    record: await inspectRecord(paths.record(revision), workspaceId, revision),
  };
}

/** Whether anything of the revision is on disk, in either format. */
export function revisionPresent(state: RevisionState): boolean {
  return state.record.state !== 'missing' || state.directory.state !== 'missing' || state.manifest.state !== 'missing';
}

/** Where `current` points (not whether that revision exists). */
export async function inspectCurrentLink(paths: ArchivePaths): Promise<CurrentLink> {
  let target: string;
  try {
    target = await readlink(paths.current);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return { state: 'absent' };
    if (errnoOf(error) === 'EINVAL') return { state: 'invalid', reason: 'current is not a symlink' };
    return { state: 'invalid', reason: `current cannot be read (${errnoOf(error)})` };
  }
  const name = target.startsWith('revs/') ? target.slice('revs/'.length) : '';
  const format = name.endsWith(RECORD_SUFFIX) ? 2 : 1;
  const revision = format === 2 ? name.slice(0, -RECORD_SUFFIX.length) : name;
  if (!REVISION_ID_PATTERN.test(revision)) return { state: 'invalid', reason: `current points at ${JSON.stringify(target)}, not at revs/<revision> or revs/<revision>${RECORD_SUFFIX}` };
  return { state: 'link', revision, format };
}

/** Whether a directory exists (a symlink or file in its place does not count). */
export async function inspectDirectory(dir: string): Promise<DirectoryState> {
  try {
    const stats = await lstat(dir);
    return stats.isDirectory() ? { state: 'present' } : { state: 'unreadable', reason: 'not a directory' };
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return { state: 'missing' };
    return { state: 'unreadable', reason: errnoOf(error) };
  }
}

// Reads and checks one manifest file.
async function inspectManifest(file: string, workspaceId: string, revision: string): Promise<ManifestState> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return { state: 'missing' };
    return { state: 'invalid', reason: `cannot be read (${errnoOf(error)})` };
  }
  const parsed = parseManifestText(text, workspaceId, revision);
  return parsed.ok ? { state: 'ok', manifest: parsed.manifest } : { state: 'invalid', reason: parsed.reason };
}

// Reads and checks one format 2 record file (it must name this workspace and revision).
async function inspectRecord(file: string, workspaceId: string, revision: string): Promise<RecordState> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return { state: 'missing' };
    return { state: 'invalid', reason: `cannot be read (${errnoOf(error)})` };
  }
  let record: RevisionRecord;
  try {
    record = parseRevisionRecord(bytes, 'record');
  } catch (error) {
    if (error instanceof RevisionRecordError) return { state: 'invalid', reason: error.message };
    throw error;
  }
  if (record.workspaceId !== workspaceId || record.revision !== revision) return { state: 'invalid', reason: `describes ${record.workspaceId}/${record.revision}` };
  return { state: 'ok', record };
}
