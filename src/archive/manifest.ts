/**
 * Revision manifests: every path of a revision with its type, mode, size and content hash,
 * plus the revision's identity (workspace, revision id, generation, reason, created-at).
 * `treeHash` digests the entries; `verify` recomputes it from the bytes on disk.
 *
 * Hashing is incremental: a file that is a hard link to the previous revision's file (same
 * inode, same size) reuses that file's hash, so a persist hashes only what changed.
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import type { DirHandle } from '../tree/dir-handle.js';
import { hashFileData } from '../tree/hash-file-data.js';
import { encodePath, walkTree, type TreeEntry } from './tree-walk.js';

export type EntryCode = 'f' | 'd' | 'l' | 'p' | 's' | 'o';

export interface ManifestEntry {
  /** Path (UTF-8, or `b64:` + base64 of the raw bytes). */
  readonly p: string;
  readonly t: EntryCode;
  /** Permission bits (0 for symlinks). */
  readonly m: number;
  /** Size in bytes (files). */
  readonly s?: number;
  /** sha256 hex of the content (files). */
  readonly h?: string;
  /** Symlink target (encoded like `p`). */
  readonly l?: string;
  /** Inode number at commit time (lets the next revision reuse hashes of hard-linked files). */
  readonly i?: number;
  /**
   * Modification time in nanoseconds (files; decimal string). With size and mode it is the next
   * persist's quick check: an unchanged file is hard-linked instead of copied. Not part of
   * `treeHash`; manifests written before it existed simply copy every file once.
   */
  readonly n?: string;
}

export interface RevisionMeta {
  readonly workspaceId: string;
  readonly revision: string;
  readonly generation: number;
  readonly reason: string;
  readonly turnId: string | null;
  readonly parent: string | null;
  readonly mode: 'reconcile' | 'upload-only' | 'restore' | 'rollback' | 'backfill' | 'migrate' | 'write';
  readonly createdAt: string;
}

export interface RevisionManifest extends RevisionMeta {
  /** 1: read from a manifest file; 2: listed from a format 2 revision's trees. */
  readonly format: 1 | 2;
  readonly files: number;
  readonly bytes: number;
  readonly treeHash: string;
  readonly entries: readonly ManifestEntry[];
}

const CODES: Record<TreeEntry['type'], EntryCode> = { file: 'f', dir: 'd', symlink: 'l', fifo: 'p', socket: 's', other: 'o' };

/**
 * sha256 of an open file, read through a reused buffer: hashing a 130 MB revision allocates no
 * per-chunk Buffers (a stream would, and the worker's RSS would grow with them until a GC).
 * The handle is closed.
 */
export async function hashHandle(handle: FileHandle, signal?: AbortSignal): Promise<string> {
  try {
    return (await hashFileData(handle, Number.POSITIVE_INFINITY, signal)).hash;
  } finally {
    await handle.close();
  }
}

/** Digest of entries (order-sensitive; entries come from `walkTree`'s stable order). */
export function treeHashOf(entries: readonly ManifestEntry[]): string {
  const hash = createHash('sha256');
  for (const e of entries) hash.update(`${e.t}\0${e.p}\0${e.m.toString(8)}\0${e.h ?? e.l ?? ''}\n`);
  return hash.digest('hex');
}

export interface ScanResult {
  readonly entries: ManifestEntry[];
  readonly files: number;
  readonly bytes: number;
  /** Files whose inode is not the previous revision's (new or rewritten). */
  readonly copiedFiles: number;
}

/**
 * Files hashed at once by `scanTree`: overlaps the open/read latency of small files (the digest
 * itself runs on the main thread, so more lanes would not add CPU).
 */
const HASH_CONCURRENCY = 4;

/**
 * Scans `root` into manifest entries. `previous` (the parent revision's manifest) lets files
 * hard-linked to it reuse their hash.
 */
export async function scanTree(root: string | DirHandle, previous: RevisionManifest | null, signal?: AbortSignal, onFile?: (files: number) => void): Promise<ScanResult> {
  const prior = new Map<string, ManifestEntry>();
  for (const e of previous?.entries ?? []) if (e.t === 'f') prior.set(e.p, e);
  const entries: ManifestEntry[] = [];
  const hashing = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let files = 0;
  let accounted = 0;
  let bytes = 0;
  let copiedFiles = 0;
  for await (const entry of walkTree(root)) {
    if (signal?.aborted) throw signal.reason;
    const p = encodePath(entry.rel);
    const t = CODES[entry.type];
    if (t === 'f') {
      const before = prior.get(p);
      const linked = before !== undefined && before.i === entry.ino && before.s === entry.size && before.h !== undefined;
      files += 1;
      bytes += entry.size;
      const n = entry.mtimeNs.toString();
      if (linked) {
        entries.push({ p, t, m: entry.mode, s: entry.size, h: before.h!, i: entry.ino, n });
        onFile?.(++accounted);
        continue;
      }
      copiedFiles += 1;
      // Hashed in the background (bounded); the entry's slot keeps the walk order.
      const index = entries.push({ p, t, m: entry.mode, s: entry.size, i: entry.ino, n }) - 1;
      // Opened now, while the walk holds its directory; hashed in the background.
      const opened = await entry.open();
      const task: Promise<void> = hashHandle(opened, signal)
        .then(
          (h) => {
            entries[index] = { p, t, m: entry.mode, s: entry.size, h, i: entry.ino, n };
            onFile?.(++accounted);
          },
          (error: unknown) => {
            failure ??= { error };
          },
        )
        .finally(() => hashing.delete(task));
      hashing.add(task);
      if (hashing.size >= HASH_CONCURRENCY) await Promise.race(hashing);
      if (failure) throw failure.error;
    } else if (t === 'l') {
      entries.push({ p, t, m: 0, l: encodePath(entry.target!) });
    } else {
      entries.push({ p, t, m: entry.mode });
    }
  }
  await Promise.all(hashing);
  if (failure) throw failure.error;
  return { entries, files, bytes, copiedFiles };
}

/** Builds a manifest from a scan. */
export function makeManifest(meta: RevisionMeta, scan: ScanResult): RevisionManifest {
  return { format: 1, ...meta, files: scan.files, bytes: scan.bytes, treeHash: treeHashOf(scan.entries), entries: scan.entries };
}

/** Paths of `before` that `after` lacks (what a reconcile deletes). */
export function removedPaths(before: RevisionManifest | null, after: readonly ManifestEntry[]): string[] {
  if (!before) return [];
  const now = new Set(after.map((e) => e.p));
  return before.entries.filter((e) => !now.has(e.p)).map((e) => e.p);
}

/** One difference found by `verifyTree`. */
export interface Mismatch {
  readonly path: string;
  readonly problem: 'missing' | 'unexpected' | 'type' | 'mode' | 'content' | 'target';
}

/** Recomputes every entry of a committed revision and compares it with its manifest. */
export async function verifyTree(root: string | DirHandle, manifest: RevisionManifest, signal?: AbortSignal): Promise<{ mismatches: Mismatch[]; treeHash: string }> {
  const scan = await scanTree(root, null, signal);
  const expected = new Map(manifest.entries.map((e) => [e.p, e]));
  const mismatches: Mismatch[] = [];
  for (const actual of scan.entries) {
    const want = expected.get(actual.p);
    expected.delete(actual.p);
    if (!want) mismatches.push({ path: actual.p, problem: 'unexpected' });
    else if (want.t !== actual.t) mismatches.push({ path: actual.p, problem: 'type' });
    else if (want.m !== actual.m) mismatches.push({ path: actual.p, problem: 'mode' });
    else if (want.h !== actual.h) mismatches.push({ path: actual.p, problem: 'content' });
    else if (want.l !== actual.l) mismatches.push({ path: actual.p, problem: 'target' });
  }
  for (const path of expected.keys()) mismatches.push({ path, problem: 'missing' });
  return { mismatches, treeHash: treeHashOf(scan.entries) };
}
