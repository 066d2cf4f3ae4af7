/**
 * Format 2 tree objects (docs/archive-format.md): one per directory, canonical JSON of its
 * entries sorted by name bytes, identified by the SHA-256 of those bytes. Pure: encoding,
 * decoding (validated: a tree read back from disk is data like any other), ids.
 */
import { createHash } from 'node:crypto';
import { decodePath, encodePath } from './tree-walk.js';

/** A regular file: content object, size, mode, mtime; `linkKey` groups the names of one inode. */
export interface FileNode {
  readonly type: 'f';
  readonly name: Buffer;
  readonly mode: number;
  readonly size: number;
  readonly object: string;
  readonly mtimeNs: bigint;
  readonly linkKey?: string;
}

export interface DirNode {
  readonly type: 'd';
  readonly name: Buffer;
  readonly mode: number;
  readonly tree: string;
}

export interface SymlinkNode {
  readonly type: 'l';
  readonly name: Buffer;
  readonly target: Buffer;
}

export interface FifoNode {
  readonly type: 'p';
  readonly name: Buffer;
  readonly mode: number;
  readonly mtimeNs: bigint;
}

export type TreeNode = FileNode | DirNode | SymlinkNode | FifoNode;

/** A lower-case hex SHA-256 id. */
export const OBJECT_ID_PATTERN = /^[0-9a-f]{64}$/;

/** Thrown when bytes that should be a tree object are not one (a damaged or foreign file). */
export class TreeFormatError extends Error {
  readonly code = 'ETREEFORMAT';
}

/** Tree order: by name bytes. */
export const compareNames = (a: TreeNode, b: TreeNode) => Buffer.compare(a.name, b.name);

/** One entry as its JSON array. */
export function encodeNode(node: TreeNode): unknown[] {
  const name = encodePath(node.name);
  switch (node.type) {
    case 'f':
      return node.linkKey === undefined ? [name, 'f', node.mode, node.size, node.object, node.mtimeNs.toString()] : [name, 'f', node.mode, node.size, node.object, node.mtimeNs.toString(), node.linkKey];
    case 'd':
      return [name, 'd', node.mode, node.tree];
    case 'l':
      return [name, 'l', 0, encodePath(node.target)];
    case 'p':
      return [name, 'p', node.mode, node.mtimeNs.toString()];
  }
}

/** The canonical bytes of a tree (entries sorted by name bytes). */
export function encodeTree(nodes: readonly TreeNode[]): Buffer {
  return encodeSortedTree([...nodes].sort(compareNames));
}

/** `nodes` in tree order (by name bytes). */
export function sortNodes(nodes: readonly TreeNode[]): TreeNode[] {
  return [...nodes].sort(compareNames);
}

/** The canonical bytes of a tree whose nodes are already in tree order (`sortNodes`). */
export function encodeSortedTree(sorted: readonly TreeNode[]): Buffer {
  for (let i = 1; i < sorted.length; i++) if (sorted[i - 1]!.name.equals(sorted[i]!.name)) throw new TreeFormatError(`duplicate name ${encodePath(sorted[i]!.name)}`);
  return Buffer.from(JSON.stringify({ v: 2, e: sorted.map(encodeNode) }), 'utf8');
}

/** True when two nodes of one name encode the same (a tree of only such nodes is its previous tree). */
export function sameNode(a: TreeNode, b: TreeNode): boolean {
  if (a.type !== b.type || !a.name.equals(b.name)) return false;
  switch (a.type) {
    case 'f': {
      const f = b as FileNode;
      return a.mode === f.mode && a.size === f.size && a.object === f.object && a.mtimeNs === f.mtimeNs && a.linkKey === f.linkKey;
    }
    case 'd':
      return a.mode === (b as DirNode).mode && a.tree === (b as DirNode).tree;
    case 'l':
      return a.target.equals((b as SymlinkNode).target);
    case 'p':
      return a.mode === (b as FifoNode).mode && a.mtimeNs === (b as FifoNode).mtimeNs;
  }
}

/** SHA-256 hex of bytes. */
export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const isMode = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 0o7777;
const isId = (v: unknown): v is string => typeof v === 'string' && OBJECT_ID_PATTERN.test(v);
// Nanoseconds since the epoch; negative before 1970 (a tree may hold `touch -d @-1` files).
const isTime = (v: unknown): v is string => typeof v === 'string' && /^-?\d{1,25}$/.test(v);
const isName = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** One entry name from its JSON text: one path component, else `TreeFormatError`. */
export function decodeName(raw: unknown): Buffer {
  if (!isName(raw)) throw new TreeFormatError(`bad entry name ${JSON.stringify(raw)?.slice(0, 80)}`);
  const name = decodePath(raw);
  if (name.length === 0 || name.includes(0x2f) || name.includes(0) || (name.length <= 2 && name.every((b) => b === 0x2e))) throw new TreeFormatError(`bad entry name ${JSON.stringify(raw)}`);
  return name;
}

// One JSON entry back into a node; throws on anything malformed.
function decodeNode(raw: unknown): TreeNode {
  if (!Array.isArray(raw) || !isName(raw[0])) throw new TreeFormatError(`bad tree entry ${JSON.stringify(raw)?.slice(0, 80)}`);
  const name = decodeName(raw[0]);
  const [, type, mode] = raw;
  if (type === 'f' && raw.length >= 6 && raw.length <= 7 && isMode(mode) && Number.isSafeInteger(raw[3]) && raw[3] >= 0 && isId(raw[4]) && isTime(raw[5]) && (raw.length === 6 || typeof raw[6] === 'string')) {
    return { type, name, mode, size: raw[3] as number, object: raw[4], mtimeNs: BigInt(raw[5]), ...(raw.length === 7 ? { linkKey: raw[6] as string } : {}) };
  }
  if (type === 'd' && raw.length === 4 && isMode(mode) && isId(raw[3])) return { type, name, mode, tree: raw[3] };
  if (type === 'l' && raw.length === 4 && mode === 0 && typeof raw[3] === 'string') return { type, name, target: decodePath(raw[3]) };
  if (type === 'p' && raw.length === 4 && isMode(mode) && isTime(raw[3])) return { type, name, mode, mtimeNs: BigInt(raw[3]) };
  throw new TreeFormatError(`bad tree entry ${JSON.stringify(raw).slice(0, 80)}`);
}

/** Entries from their JSON arrays, which must be sorted by name bytes and unique. */
export function decodeNodes(raw: readonly unknown[]): TreeNode[] {
  const nodes = raw.map(decodeNode);
  for (let i = 1; i < nodes.length; i++) if (compareNames(nodes[i - 1]!, nodes[i]!) >= 0) throw new TreeFormatError('tree entries are not sorted and unique');
  return nodes;
}

/** Bytes as JSON, or `TreeFormatError`. */
export function parseTreeJson(bytes: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new TreeFormatError('tree object is not JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new TreeFormatError('not a format 2 tree object');
  return parsed as Record<string, unknown>;
}

