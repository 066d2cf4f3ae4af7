// Reads what the archive holds for a path, whatever the revision's format (1: a tree on disk,
// 2: objects and trees), so tests can check contents without knowing the format.
import { createHash } from 'node:crypto';
import { lstat, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { ArchiveStore } from '../../src/archive/archive-store.js';
import { verifyTree } from '../../src/archive/manifest.js';
import { lookupPath } from '../../src/archive/revision-reader.js';
import { readTree } from './tree.js';

export type ArchivedNode =
  | { readonly type: 'file'; readonly mode: number; readonly size: number; readonly content: Buffer }
  | { readonly type: 'dir'; readonly mode: number }
  | { readonly type: 'symlink'; readonly target: string }
  | { readonly type: 'fifo'; readonly mode: number };

/** The node at `rel` in `revision` (default: current) of `ws`; null when absent. */
export async function archivedNode(archive: ArchiveStore, ws: string, rel: string, revision?: string): Promise<ArchivedNode | null> {
  const id = revision ?? (await archive.current(ws));
  if (!id) return null;
  const record = await archive.readRecord(ws, id);
  if (record) {
    const node = await lookupPath(archive.objects, record.root, Buffer.from(rel));
    if (!node) return null;
    if (node.type === 'f') return { type: 'file', mode: node.mode, size: node.size, content: await archive.objects.readObject(node.object) };
    if (node.type === 'd') return { type: 'dir', mode: node.mode };
    if (node.type === 'l') return { type: 'symlink', target: node.target.toString() };
    return { type: 'fifo', mode: node.mode };
  }
  const full = path.join(archive.paths(ws).revision(id), rel);
  const stats = await lstat(full).catch(() => null);
  if (!stats) return null;
  if (stats.isFile()) return { type: 'file', mode: stats.mode & 0o7777, size: stats.size, content: await readFile(full) };
  if (stats.isDirectory()) return { type: 'dir', mode: stats.mode & 0o7777 };
  if (stats.isSymbolicLink()) return { type: 'symlink', target: await readlink(full) };
  return { type: 'fifo', mode: stats.mode & 0o7777 };
}

/** The archived bytes of the file at `rel` (as UTF-8 text), or null. */
export async function archivedText(archive: ArchiveStore, ws: string, rel: string, revision?: string): Promise<string | null> {
  const node = await archivedNode(archive, ws, rel, revision);
  return node?.type === 'file' ? node.content.toString('utf8') : null;
}

/**
 * A revision (default: current) as `readTree` of helpers/tree.ts shows a directory: relative path
 * → base64 content (files) / `-> target` (symlinks) / 'dir' / 'special', whatever the format.
 */
export async function readArchivedTree(archive: ArchiveStore, ws: string, revision?: string): Promise<Record<string, string>> {
  const id = revision ?? (await archive.current(ws));
  if (!id) throw new Error(`workspace ${ws} has no revision`);
  const record = await archive.readRecord(ws, id);
  if (!record) return readTree(archive.paths(ws).revision(id));
  const out: Record<string, string> = {};
  const walk = async (tree: string, rel: string): Promise<void> => {
    const nodes = [...(await archive.objects.readTree(tree))].sort((a, b) => (a.name.toString() < b.name.toString() ? -1 : 1));
    for (const node of nodes) {
      const child = rel ? `${rel}/${node.name.toString()}` : node.name.toString();
      if (node.type === 'l') out[child] = `-> ${node.target.toString()}`;
      else if (node.type === 'd') {
        out[child] = 'dir';
        await walk(node.tree, child);
      } else if (node.type === 'f') out[child] = (await archive.objects.readObject(node.object)).toString('base64');
      else out[child] = 'special';
    }
  };
  await walk(record.root, '');
  return out;
}

/**
 * What of a revision does not match its listing: format 1 re-hashes its tree on disk against the
 * manifest (`verifyTree`), format 2 re-hashes every file's object against its id and size.
 */
export async function archivedMismatches(archive: ArchiveStore, ws: string, revision: string): Promise<{ path: string; problem: string }[]> {
  const manifest = await archive.readManifest(ws, revision);
  if (!manifest) return [{ path: '(revision)', problem: 'missing' }];
  if (manifest.format === 1) return [...(await verifyTree(archive.paths(ws).revision(revision), manifest)).mismatches];
  const problems: { path: string; problem: string }[] = [];
  for (const entry of manifest.entries) {
    if (entry.t !== 'f') continue;
    const bytes = await archive.objects.readObject(entry.h!).catch(() => null);
    if (!bytes) problems.push({ path: entry.p, problem: 'missing' });
    else if (bytes.length !== entry.s || createHash('sha256').update(bytes).digest('hex') !== entry.h) problems.push({ path: entry.p, problem: 'content' });
  }
  return problems;
}
