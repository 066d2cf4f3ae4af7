/**
 * The archive layout (other tools rely on it):
 *
 *   {archiveRoot}/{workspaceId}/current            symlink → revs/{revision}
 *   {archiveRoot}/{workspaceId}/revs/{revision}/   exactly the workspace tree (immutable)
 *   {archiveRoot}/{workspaceId}/revs/{revision}.manifest.json
 *   {archiveRoot}/{workspaceId}/revs/.tmp-{revision}/   a revision being written (never reachable from current)
 */
import path from 'node:path';
import { WORKSPACE_ID_PATTERN } from '../queues/payload.js';

export const REVISION_ID_PATTERN = /^r\d{8}T\d{9}Z-g\d+-[a-z0-9]{6}$/;
export const TMP_PREFIX = '.tmp-';
export const MANIFEST_SUFFIX = '.manifest.json';

export interface ArchivePaths {
  readonly dir: string;
  readonly current: string;
  readonly revs: string;
  revision(id: string): string;
  manifest(id: string): string;
  tmp(id: string): string;
  /** `current`'s link text for a revision (relative, so the archive can move). */
  currentTarget(id: string): string;
}

export function archivePaths(archiveRoot: string, workspaceId: string): ArchivePaths {
  const dir = path.join(archiveRoot, workspaceId);
  const revs = path.join(dir, 'revs');
  return {
    dir,
    current: path.join(dir, 'current'),
    revs,
    revision: (id) => path.join(revs, id),
    manifest: (id) => path.join(revs, `${id}${MANIFEST_SUFFIX}`),
    tmp: (id) => path.join(revs, `${TMP_PREFIX}${id}`),
    currentTarget: (id) => `revs/${id}`,
  };
}

/**
 * The revision id when `dir` is exactly the directory of a revision of `workspaceId` under
 * `archiveRoot` (`{archiveRoot}/{ws}/revs/{revision}`), else null: never another workspace's,
 * a temporary one, a `..` path or anything outside the archive.
 */
export function revisionAt(archiveRoot: string, workspaceId: string, dir: string): string | null {
  const revision = path.basename(dir);
  return WORKSPACE_ID_PATTERN.test(workspaceId) && REVISION_ID_PATTERN.test(revision) && archivePaths(archiveRoot, workspaceId).revision(revision) === dir ? revision : null;
}
