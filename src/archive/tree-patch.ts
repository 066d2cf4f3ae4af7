/**
 * Trees stored as a patch of another tree (docs/archive-format.md, "Tree patches"). A directory
 * that changed in a few names is written as its edits of a tree stored whole, not as every entry
 * again: a 1 % turn over large directories then adds bytes in proportion to the change. A tree's
 * id is still the SHA-256 of its whole canonical bytes (tree-object.ts), whichever way it is
 * stored, so identical directories share one id and a reader checks a patched tree the same way.
 *
 * The bytes of a patch are exactly `JSON.stringify({v: 2, b: baseId, e: [ENTRY...], r: [NAME...]})`:
 * `e` the entries added or replaced, `r` the names removed, each sorted by name bytes, unique,
 * and no name in both. The base is always a tree stored whole (a patch of a patch is refused),
 * so a read costs at most two files. Pure: no I/O.
 */
import { compareNames, decodeName, decodeNodes, encodeNode, OBJECT_ID_PATTERN, parseTreeJson, sameNode, sha256, TreeFormatError, type TreeNode } from './tree-object.js';
import { encodePath } from './tree-walk.js';

export interface TreePatch {
  /** The tree stored whole that the edits apply to. */
  readonly base: string;
  /** Entries added or replaced, in tree order. */
  readonly set: readonly TreeNode[];
  /** Names removed, in tree order. */
  readonly removed: readonly Buffer[];
}

/** How a tree's file holds it. */
export type StoredTree = { readonly kind: 'whole'; readonly nodes: TreeNode[] } | { readonly kind: 'patch'; readonly patch: TreePatch };

/** A patch's bytes begin with this (then the base id and `"`); a whole tree's with `{"v":2,"e":`. */
export const PATCH_PREFIX = '{"v":2,"b":"';
const WHOLE_PREFIX = '{"v":2,"e":';

/** The edits that turn `base` (tree order) into `nodes` (tree order). */
export function patchBetween(baseId: string, base: readonly TreeNode[], nodes: readonly TreeNode[]): TreePatch {
  const set: TreeNode[] = [];
  const removed: Buffer[] = [];
  let i = 0;
  let j = 0;
  while (i < base.length || j < nodes.length) {
    const order = i >= base.length ? 1 : j >= nodes.length ? -1 : compareNames(base[i]!, nodes[j]!);
    if (order < 0) removed.push(base[i++]!.name);
    else if (order > 0) set.push(nodes[j++]!);
    else {
      if (!sameNode(base[i]!, nodes[j]!)) set.push(nodes[j]!);
      i++;
      j++;
    }
  }
  return { base: baseId, set, removed };
}

/** A patch's canonical bytes. */
export function encodeTreePatch(patch: TreePatch): Buffer {
  return Buffer.from(JSON.stringify({ v: 2, b: patch.base, e: patch.set.map(encodeNode), r: patch.removed.map(encodePath) }), 'utf8');
}

/** What a tree file holds, validated (the id is checked by the reader once the tree is whole). */
export function decodeStoredTree(bytes: Buffer): StoredTree {
  const head = bytes.subarray(0, PATCH_PREFIX.length).toString('latin1');
  const body = parseTreeJson(bytes);
  if (head === PATCH_PREFIX) {
    const { b, e, r } = body;
    if (body.v !== 2 || typeof b !== 'string' || !OBJECT_ID_PATTERN.test(b) || !Array.isArray(e) || !Array.isArray(r) || Object.keys(body).length !== 4) {
      throw new TreeFormatError('not a format 2 tree patch');
    }
    const set = decodeNodes(e);
    const removed = r.map(decodeName);
    for (let k = 1; k < removed.length; k++) if (Buffer.compare(removed[k - 1]!, removed[k]!) >= 0) throw new TreeFormatError('tree patch: removed names are not sorted and unique');
    return { kind: 'patch', patch: { base: b, set, removed } };
  }
  if (!bytes.subarray(0, WHOLE_PREFIX.length).equals(Buffer.from(WHOLE_PREFIX)) || body.v !== 2 || !Array.isArray(body.e) || 'b' in body) throw new TreeFormatError('not a format 2 tree object');
  return { kind: 'whole', nodes: decodeNodes(body.e) };
}

/**
 * The nodes of a tree stored whole whose bytes must hash to `id`; `TreeFormatError` for a patch,
 * or bytes that are not `id`'s. `what` names the tree in the error (e.g. "the base of <id>").
 */
export function decodeWholeTree(bytes: Buffer, id: string, what = `tree ${id}`): TreeNode[] {
  const stored = decodeStoredTree(bytes);
  if (stored.kind !== 'whole') throw new TreeFormatError(`${what} is itself a patch`);
  if (sha256(bytes) !== id) throw new TreeFormatError(`${what} does not match its content`);
  return stored.nodes;
}

/** The base a patch's bytes name, read from their first bytes; null for a tree stored whole. */
export function patchBaseOf(head: Buffer): string | null {
  if (head.subarray(0, PATCH_PREFIX.length).toString('latin1') !== PATCH_PREFIX) return null;
  const id = head.subarray(PATCH_PREFIX.length, PATCH_PREFIX.length + 64).toString('latin1');
  if (!OBJECT_ID_PATTERN.test(id)) throw new TreeFormatError('not a format 2 tree patch');
  return id;
}

/** `base` (tree order) with the patch applied, in tree order; refuses a patch that does not fit it. */
export function applyTreePatch(base: readonly TreeNode[], patch: TreePatch): TreeNode[] {
  const out: TreeNode[] = [];
  let i = 0;
  let s = 0;
  let r = 0;
  const { set, removed } = patch;
  while (i < base.length || s < set.length) {
    const fromBase = base[i];
    const fromSet = set[s];
    const order = fromBase === undefined ? 1 : fromSet === undefined ? -1 : compareNames(fromBase, fromSet);
    if (order > 0) {
      if (r < removed.length && removed[r]!.equals(fromSet!.name)) throw new TreeFormatError(`tree patch both sets and removes ${encodePath(fromSet!.name)}`);
      out.push(fromSet!);
      s++;
      continue;
    }
    // A base entry: removed, replaced (order 0) or kept.
    if (r < removed.length && Buffer.compare(removed[r]!, fromBase!.name) < 0) throw new TreeFormatError(`tree patch removes ${encodePath(removed[r]!)}, which its base lacks`);
    const gone = r < removed.length && removed[r]!.equals(fromBase!.name);
    if (gone) {
      if (order === 0) throw new TreeFormatError(`tree patch both sets and removes ${encodePath(fromBase!.name)}`);
      r++;
    } else if (order === 0) {
      out.push(fromSet!);
      s++;
    } else out.push(fromBase!);
    i++;
  }
  if (r < removed.length) throw new TreeFormatError(`tree patch removes ${encodePath(removed[r]!)}, which its base lacks`);
  return out;
}
