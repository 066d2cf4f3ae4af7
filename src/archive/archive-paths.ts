/**
 * The archive layout (other tools rely on it):
 *
 *   {archiveRoot}/{workspaceId}/current            symlink → revs/{revision} (format 1)
 *                                                   or revs/{revision}.rev.json (format 2)
 *   {archiveRoot}/{workspaceId}/revs/{revision}/   format 1: exactly the workspace tree (immutable)
 *   {archiveRoot}/{workspaceId}/revs/{revision}.manifest.json
 *   {archiveRoot}/{workspaceId}/revs/{revision}.rev.json   format 2: the revision record
 *   {archiveRoot}/.store/                          format 2: objects and trees (object-store.ts)
 *
 * (docs/archive-format.md describes both formats for readers in other languages)
 *
 * and the temporaries a commit writes, then renames into place (a failed or killed one leaves
 * them behind as litter; `tempKindOf` is the one place that recognises them):
 *
 *   {archiveRoot}/{workspaceId}/revs/.tmp-{revision}/                  a revision being written (never reachable from current)
 *   {archiveRoot}/{workspaceId}/revs/{revision}.manifest.json.tmp-{hex}  a manifest being written
 *   {archiveRoot}/{workspaceId}/revs/{revision}.rev.json.tmp-{hex}       a revision record being written
 *   {archiveRoot}/{workspaceId}/current.tmp-{hex}                       the next `current` link, before its rename
 *   {archiveRoot}/.store/tmp/o-{hex}[w{n}]-{count} and t-…              an object or tree being written (object-store.ts, object-writer.ts)
 *   {archiveRoot}/.store/tmp/gc-{o|t}-{id}-{hex}                        an object or tree the objects GC is deleting
 */
import path from 'node:path';
import { WORKSPACE_ID_PATTERN } from '../queues/payload.js';

export const REVISION_ID_PATTERN = /^r\d{8}T\d{9}Z-g\d+-[a-z0-9]{6}$/;
/** Marks every temporary name: the prefix of a temporary revision, the infix of a temporary file. */
export const TMP_PREFIX = '.tmp-';
export const MANIFEST_SUFFIX = '.manifest.json';
/** Format 2 revision records. */
export const RECORD_SUFFIX = '.rev.json';
const CURRENT = 'current';

/** What a temporary of the archive would have become (`store`: an object or tree of `.store/`). */
export type ArchiveTempKind = 'revision' | 'manifest' | 'current' | 'store';

// `{revision}.manifest.json.tmp-{hex}` and `current.tmp-{hex}` (the hex is a random nonce).
const MANIFEST_TEMP = new RegExp(`^${REVISION_ID_PATTERN.source.slice(1, -1)}(${escape(MANIFEST_SUFFIX)}|${escape(RECORD_SUFFIX)})${escape(TMP_PREFIX)}[0-9a-f]+$`);
const CURRENT_TEMP = new RegExp(`^${CURRENT}${escape(TMP_PREFIX)}[0-9a-f]+$`);
// `.store/tmp/` names: written by ObjectStore (`storeTempName`; before it, `{o|t}-{16 hex}`), or
// moved aside by the objects GC (quarantine).
const STORE_TEMP = /^(?:[ot]-[0-9a-f]{16}(?:w[0-9a-z]{1,8})?(?:-[0-9a-z]{1,11})?(?:\.pack|\.idx)?|gc-[otp]-[0-9a-f]{64}-[0-9a-f]{8})$/;

/**
 * What the `.store/tmp/` names of one writer start with: the kind, then the writer's prefix (16
 * random hex digits per ObjectStore, followed by `w{n}` for its n-th writer thread).
 */
export function storeTempPrefix(kind: 'o' | 't', writer: string): string {
  return `${kind}-${writer}-`;
}

/** The `.store/tmp/` name of a writer's `count`-th temporary. */
export function storeTempName(kind: 'o' | 't', writer: string, count: number): string {
  return storeTempPrefix(kind, writer) + count.toString(36);
}
const QUARANTINE = /^gc-([otp])-([0-9a-f]{64})-[0-9a-f]{8}$/;
const KIND_LETTER = { object: 'o', tree: 't', pack: 'p' } as const;
const LETTER_KIND = { o: 'object', t: 'tree', p: 'pack' } as const;

/** The `.store/tmp/` name under which the objects GC moves an object, a tree or a pack's index it is about to delete. */
export function quarantineName(kind: 'object' | 'tree' | 'pack', id: string, nonce: string): string {
  return `gc-${KIND_LETTER[kind]}-${id}-${nonce}`;
}

/** What a quarantine name holds; null for any other name. */
export function quarantined(name: string): { readonly kind: 'object' | 'tree' | 'pack'; readonly id: string } | null {
  const match = QUARANTINE.exec(name);
  return match ? { kind: LETTER_KIND[match[1] as 'o' | 't' | 'p'], id: match[2]! } : null;
}

export interface ArchivePaths {
  readonly dir: string;
  readonly current: string;
  readonly revs: string;
  revision(id: string): string;
  manifest(id: string): string;
  /** A format 2 revision record. */
  record(id: string): string;
  /** A temporary record of revision `id`; `nonce` is random hex. */
  recordTmp(id: string, nonce: string): string;
  tmp(id: string): string;
  /** A temporary manifest of revision `id`; `nonce` is random hex. */
  manifestTmp(id: string, nonce: string): string;
  /** A temporary `current` link; `nonce` is random hex. */
  currentTmp(nonce: string): string;
  /** `current`'s link text for a revision (relative, so the archive can move). */
  currentTarget(id: string, format?: 1 | 2): string;
}

export function archivePaths(archiveRoot: string, workspaceId: string): ArchivePaths {
  const dir = path.join(archiveRoot, workspaceId);
  const revs = path.join(dir, 'revs');
  return {
    dir,
    current: path.join(dir, CURRENT),
    revs,
    revision: (id) => path.join(revs, id),
    manifest: (id) => path.join(revs, `${id}${MANIFEST_SUFFIX}`),
    record: (id) => path.join(revs, `${id}${RECORD_SUFFIX}`),
    recordTmp: (id, nonce) => path.join(revs, `${id}${RECORD_SUFFIX}${TMP_PREFIX}${nonce}`),
    tmp: (id) => path.join(revs, `${TMP_PREFIX}${id}`),
    manifestTmp: (id, nonce) => path.join(revs, `${id}${MANIFEST_SUFFIX}${TMP_PREFIX}${nonce}`),
    currentTmp: (nonce) => path.join(dir, `${CURRENT}${TMP_PREFIX}${nonce}`),
    currentTarget: (id, format = 1) => (format === 2 ? `revs/${id}${RECORD_SUFFIX}` : `revs/${id}`),
  };
}

/**
 * Recognises a temporary by its name and the directory it sits in (`revs`, the workspace's
 * own directory, or `.store/tmp`); null for anything else (revisions, manifests, `current`,
 * foreign files).
 */
export function tempKindOf(where: 'revs' | 'dir' | 'store', name: string): ArchiveTempKind | null {
  if (where === 'store') return STORE_TEMP.test(name) ? 'store' : null;
  if (where === 'revs') {
    if (name.startsWith(TMP_PREFIX)) return 'revision';
    return MANIFEST_TEMP.test(name) ? 'manifest' : null;
  }
  return CURRENT_TEMP.test(name) ? 'current' : null;
}

// A string as a literal inside a regular expression.
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
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

/** Like `revisionAt`, for the record of a format 2 revision (`{archiveRoot}/{ws}/revs/{revision}.rev.json`). */
export function recordAt(archiveRoot: string, workspaceId: string, file: string): string | null {
  const name = path.basename(file);
  if (!name.endsWith(RECORD_SUFFIX)) return null;
  const revision = name.slice(0, -RECORD_SUFFIX.length);
  return WORKSPACE_ID_PATTERN.test(workspaceId) && REVISION_ID_PATTERN.test(revision) && archivePaths(archiveRoot, workspaceId).record(revision) === file ? revision : null;
}
