/**
 * What a backfill copies (pure): every legacy file whose path the archive's current revision
 * lacks. The archive wins: a path it already has (of any type) is never overwritten. A legacy
 * file that cannot exist in the tree is a conflict and is skipped: an ancestor that is a file or
 * symlink in the archive, or an ancestor that is itself a legacy file (`a` and `a/b`; files are
 * taken in byte order, so the shorter path wins).
 */
import { encodePath } from '../archive/tree-walk.js';
import type { LegacyFile } from './legacy-source.js';

export interface PathConflict {
  readonly path: string;
  readonly reason: string;
}

export interface BackfillPlan {
  /** Legacy files to copy, in byte order of their paths. */
  readonly copy: readonly LegacyFile[];
  /** Legacy files whose path the archive already has (the archive's version stays). */
  readonly archived: readonly LegacyFile[];
  readonly conflicts: readonly PathConflict[];
}

/** Encoded paths of every proper ancestor of a relative byte path, shortest first. */
export function ancestorsOf(rel: Buffer): string[] {
  const out: string[] = [];
  for (let at = rel.indexOf(0x2f); at !== -1; at = rel.indexOf(0x2f, at + 1)) out.push(encodePath(rel.subarray(0, at)));
  return out;
}

/** Plans the copy of `legacy` files into a tree whose entries are `archive`. */
export function planBackfill(archive: readonly { readonly p: string; readonly t: string }[], legacy: readonly LegacyFile[]): BackfillPlan {
  const types = new Map(archive.map((e) => [e.p, e.t]));
  const plannedFiles = new Set<string>();
  const plannedDirs = new Set<string>();
  const copy: LegacyFile[] = [];
  const archived: LegacyFile[] = [];
  const conflicts: PathConflict[] = [];
  for (const file of [...legacy].sort((a, b) => Buffer.compare(a.rel, b.rel))) {
    const existing = types.get(file.path);
    if (existing === 'f') {
      archived.push(file);
      continue;
    }
    if (existing !== undefined) {
      conflicts.push({ path: file.path, reason: `the archive has a ${existing === 'd' ? 'directory' : 'non-file'} at this path` });
      continue;
    }
    if (plannedDirs.has(file.path)) {
      conflicts.push({ path: file.path, reason: 'another legacy file lies below this path' });
      continue;
    }
    const ancestors = ancestorsOf(file.rel);
    const blocked = ancestors.find((a) => (types.has(a) && types.get(a) !== 'd') || plannedFiles.has(a));
    if (blocked !== undefined) {
      conflicts.push({ path: file.path, reason: `ancestor ${JSON.stringify(blocked)} is a file or symlink` });
      continue;
    }
    copy.push(file);
    plannedFiles.add(file.path);
    for (const a of ancestors) plannedDirs.add(a);
  }
  return { copy, archived, conflicts };
}
