// Legacy blob store fixtures and byte-exact views of archive revisions, for backfill tests.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { absoluteBytes, encodePath, walkTree } from '../../src/archive/tree-walk.js';
import { encodeBlobName } from '../../src/backfill/blob-name.js';
import type { ArchiveStore } from '../../src/archive/archive-store.js';

export { rng } from './rng.js';

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
  if (!revision) return new Map();
  if ((await archive.formatOf(workspaceId, revision)) === 1) return filesOf(archive.paths(workspaceId).revision(revision));
  // Format 2: every file entry's object.
  const out: FileMap = new Map();
  for (const entry of (await archive.readManifest(workspaceId, revision))!.entries) if (entry.t === 'f') out.set(entry.p, await archive.objects.readObject(entry.h!));
  return out;
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
