// Legacy blob store fixtures and byte-exact views of archive revisions, for backfill tests.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { absoluteBytes, encodePath, walkTree } from '../../src/archive/tree-walk.js';
import { encodeBlobName } from '../../src/backfill/blob-name.js';
import type { ArchiveStore } from '../../src/archive/archive-store.js';

export type FileMap = Map<string, Buffer>;

/** Writes files (relative path bytes/text → content) as a workspace of the flat blob store. */
export async function writeLegacyWorkspace(legacyRoot: string, workspaceId: string, files: Iterable<readonly [Buffer | string, Buffer | string]>): Promise<void> {
  const dir = path.join(legacyRoot, workspaceId);
  await mkdir(dir, { recursive: true });
  for (const [rel, content] of files) await writeFile(absoluteBytes(dir, encodeBlobName(rel)), content);
}

/** Regular files of a tree: encoded path → bytes (nothing followed). */
export async function filesOf(root: string): Promise<FileMap> {
  const out: FileMap = new Map();
  for await (const entry of walkTree(root)) if (entry.type === 'file') out.set(encodePath(entry.rel), await readFile(absoluteBytes(root, entry.rel)));
  return out;
}

/** Regular files of a workspace's current revision (empty when it has none). */
export async function archivedFiles(archive: ArchiveStore, workspaceId: string): Promise<FileMap> {
  const revision = await archive.current(workspaceId);
  return revision ? filesOf(archive.paths(workspaceId).revision(revision)) : new Map();
}

/** Asserts two file maps hold the same paths with the same bytes; returns a list of differences. */
export function diffFiles(expected: FileMap, actual: FileMap): string[] {
  const problems: string[] = [];
  for (const [p, bytes] of expected) {
    const got = actual.get(p);
    if (!got) problems.push(`missing ${JSON.stringify(p)}`);
    else if (!got.equals(bytes)) problems.push(`changed ${JSON.stringify(p)}`);
  }
  for (const p of actual.keys()) if (!expected.has(p)) problems.push(`unexpected ${JSON.stringify(p)}`);
  return problems;
}

/** Deterministic pseudo-random numbers (mulberry32) so a failing run can be replayed. */
export function rng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
