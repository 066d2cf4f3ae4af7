/**
 * Cold reads: a workspace's files as a kept revision holds them (its current one by default),
 * read down its format 2 trees; nothing on a live tree is touched. A format 1 revision answers a
 * read of its current file (through the no-follow reader of the migrating store); its listings
 * need `fleet archive migrate` first.
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import { resolvePath } from '../archive/revision-reader.js';
import type { RevisionRecord } from '../archive/revision-record.js';
import type { FileNode, TreeNode } from '../archive/tree-object.js';
import { readArchiveFile } from '../backfill/read-archive-file.js';
import { FileNotFoundError } from '../errors/file-not-found-error.js';
import { NotAFileError } from '../errors/not-a-file-error.js';
import { NotImplementedError } from '../errors/not-implemented-error.js';
import { RevisionNotFoundError } from '../persist/rollback-workspace.js';
import type { TreeEntry } from './workspace-io.js';

export interface ColdTree {
  readonly revision: string;
  /** Root tree id (format 2); null for a format 1 revision. */
  readonly root: string | null;
}

const KIND: Record<TreeNode['type'], TreeEntry['type']> = { f: 'file', d: 'dir', l: 'symlink', p: 'other' };
const FOUND: Record<TreeNode['type'], string> = { f: 'a file', d: 'a directory', l: 'a symlink', p: 'a FIFO' };

const isoOfNs = (ns: bigint): string => new Date(Number(ns / 1_000_000n)).toISOString();

/** A tree node as an entry of the API (`path` is where it is). */
export function entryOf(path: string, node: TreeNode): TreeEntry {
  return {
    path,
    type: KIND[node.type],
    size: node.type === 'f' ? node.size : 0,
    mode: node.type === 'l' ? 0 : node.mode,
    mtime: node.type === 'f' || node.type === 'p' ? isoOfNs(node.mtimeNs) : new Date(0).toISOString(),
    ...(node.type === 'f' ? { hash: node.object } : {}),
    ...(node.type === 'l' ? { target: node.target.toString() } : {}),
  };
}

/** The revision read (the current one when not named) and its root; null when the workspace has none yet. */
export async function coldTree(archive: ArchiveStore, workspaceId: string, revision?: string): Promise<ColdTree | null> {
  const named = revision ?? (await archive.current(workspaceId));
  if (!named) {
    if (revision) throw new RevisionNotFoundError(`workspace ${workspaceId} has no revision ${revision}`, { context: { workspaceId, revision } });
    return null;
  }
  const record = await archive.readRecord(workspaceId, named);
  if (record) return { revision: named, root: record.root };
  if ((await archive.formatOf(workspaceId, named)) === 1) return { revision: named, root: null };
  throw new RevisionNotFoundError(`workspace ${workspaceId} has no revision ${named}`, { context: { workspaceId, revision: named } });
}

/** The node at `parts` of a format 2 tree; null when absent (or below a non-directory). */
export async function nodeAt(archive: ArchiveStore, root: string, parts: readonly string[]): Promise<TreeNode | null> {
  if (parts.length === 0) return { type: 'd', name: Buffer.alloc(0), mode: 0o755, tree: root };
  const found = await resolvePath(archive.objects, root, Buffer.from(parts.join('/')));
  return found.state === 'node' ? found.node : null;
}

/** What the API answers (501) for an operation it does only on format 2 revisions. */
const format1 = (what: string) => new NotImplementedError(`${what} of a format 1 revision through the API (run \`fleet archive migrate\`)`);

/** The record of a kept format 2 revision: 404 RevisionNotFound when not kept, 501 for format 1. */
export async function keptRecord(archive: Pick<ArchiveStore, 'readRecord' | 'formatOf'>, workspaceId: string, revision: string, what: string): Promise<RevisionRecord> {
  const record = await archive.readRecord(workspaceId, revision);
  if (record) return record;
  if ((await archive.formatOf(workspaceId, revision)) === 1) throw format1(what);
  throw new RevisionNotFoundError(`workspace ${workspaceId} has no revision ${revision}`, { context: { workspaceId, revision } });
}

/** The regular file at `parts` of a format 2 tree: 404 FileNotFound when absent, 409 NotAFile when something else. */
export async function fileNodeAt(archive: ArchiveStore, workspaceId: string, path: string, parts: readonly string[], tree: { readonly revision: string; readonly root: string }): Promise<FileNode> {
  const node = await nodeAt(archive, tree.root, parts);
  if (!node) throw new FileNotFoundError(workspaceId, path, `revision ${tree.revision}`);
  if (node.type !== 'f') throw new NotAFileError(workspaceId, path, FOUND[node.type]);
  return node;
}

export async function readCold(archive: ArchiveStore, workspaceId: string, path: string, parts: readonly string[], revision?: string): Promise<{ content: Buffer; revision: string }> {
  const tree = await coldTree(archive, workspaceId, revision);
  if (!tree) throw new FileNotFoundError(workspaceId, path, 'no live sandbox and no revision yet');
  if (tree.root === null) {
    if (revision) throw format1('reading a kept file');
    const read = await readArchiveFile(archive, workspaceId, Buffer.from(path));
    if (read.state === 'hit') return { content: read.content, revision: read.revision };
    if (read.state === 'present') throw new NotAFileError(workspaceId, path, 'not a regular file');
    throw new FileNotFoundError(workspaceId, path, `revision ${tree.revision}`);
  }
  const node = await fileNodeAt(archive, workspaceId, path, parts, { revision: tree.revision, root: tree.root });
  return { content: await archive.objects.readObject(node.object), revision: tree.revision };
}

export async function statCold(archive: ArchiveStore, workspaceId: string, path: string, parts: readonly string[], revision?: string): Promise<{ entry: TreeEntry | null; revision: string | null }> {
  const tree = await coldTree(archive, workspaceId, revision);
  if (!tree) return { entry: null, revision: null };
  if (tree.root === null) throw format1('stat');
  const node = await nodeAt(archive, tree.root, parts);
  return { entry: node ? entryOf(path, node) : null, revision: tree.revision };
}

export async function listCold(archive: ArchiveStore, workspaceId: string, path: string, parts: readonly string[], revision?: string): Promise<{ entries: TreeEntry[]; revision: string | null }> {
  const tree = await coldTree(archive, workspaceId, revision);
  if (!tree) {
    if (parts.length === 0) return { entries: [], revision: null };
    throw new FileNotFoundError(workspaceId, path, 'no live sandbox and no revision yet');
  }
  if (tree.root === null) throw format1('listing');
  const node = await nodeAt(archive, tree.root, parts);
  if (!node) throw new FileNotFoundError(workspaceId, path, `revision ${tree.revision}`);
  if (node.type !== 'd') throw new NotAFileError(workspaceId, path, `${FOUND[node.type]} (not a directory)`);
  const prefix = path === '' ? '' : `${path}/`;
  const entries = (await archive.objects.readTree(node.tree)).map((child) => entryOf(`${prefix}${child.name.toString()}`, child));
  return { entries, revision: tree.revision };
}
