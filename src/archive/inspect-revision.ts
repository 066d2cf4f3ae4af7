/**
 * What is on disk for one revision and for `current`, without trusting any of it: the
 * directory may be gone, the manifest missing, torn or someone else's, the link dangling.
 * Read-only; errors other than "not there" become a reason (by errno code), never a throw.
 */
import { lstat, readFile, readlink } from 'node:fs/promises';
import { REVISION_ID_PATTERN, type ArchivePaths } from './archive-paths.js';
import type { RevisionManifest } from './manifest.js';
import { parseManifestText } from './manifest-schema.js';

export type DirectoryState = { readonly state: 'present' } | { readonly state: 'missing' } | { readonly state: 'unreadable'; readonly reason: string };

export type ManifestState =
  | { readonly state: 'ok'; readonly manifest: RevisionManifest }
  | { readonly state: 'missing' }
  | { readonly state: 'invalid'; readonly reason: string };

export interface RevisionState {
  readonly directory: DirectoryState;
  readonly manifest: ManifestState;
}

export type CurrentLink =
  | { readonly state: 'absent' }
  /** `current` exists but is not a symlink to `revs/<revision id>`. */
  | { readonly state: 'invalid'; readonly reason: string }
  | { readonly state: 'link'; readonly revision: string };

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException).code ?? 'unknown error';

/** The directory and manifest of `revision`. */
export async function inspectRevision(paths: ArchivePaths, workspaceId: string, revision: string): Promise<RevisionState> {
  return { directory: await inspectDirectory(paths.revision(revision)), manifest: await inspectManifest(paths.manifest(revision), workspaceId, revision) };
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
  const revision = target.startsWith('revs/') ? target.slice('revs/'.length) : '';
  if (!REVISION_ID_PATTERN.test(revision)) return { state: 'invalid', reason: `current points at ${JSON.stringify(target)}, not at revs/<revision>` };
  return { state: 'link', revision };
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
