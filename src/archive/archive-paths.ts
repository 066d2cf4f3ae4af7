/**
 * The archive layout (other tools rely on it):
 *
 *   {archiveRoot}/{workspaceId}/current            symlink → revs/{revision}
 *   {archiveRoot}/{workspaceId}/revs/{revision}/   exactly the workspace tree (immutable)
 *   {archiveRoot}/{workspaceId}/revs/{revision}.manifest.json
 *   {archiveRoot}/{workspaceId}/revs/.tmp-{revision}/   a revision being written (never reachable from current)
 */
import path from 'node:path';

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
