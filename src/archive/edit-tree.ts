/**
 * Adds entries to a format 2 revision's trees without touching anything else: the trees on the
 * paths to the new entries are written again, every other subtree is shared by id. Missing
 * directories are created (mode 0755). An existing name is never replaced (the caller plans
 * additions where the revision has nothing, as a backfill does).
 */
import type { ObjectStore } from './object-store.js';
import type { TreeNode } from './tree-object.js';

export interface Addition {
  /** Path below the root, bytes '/'-separated. */
  readonly rel: Buffer;
  /** The node to place there (its `name` is the last component). */
  readonly node: TreeNode;
}

/** Thrown when an addition meets an existing name or a non-directory on its way. */
export class TreeEditError extends Error {
  readonly code = 'ETREEEDIT';
}

const NEW_DIRECTORY_MODE = 0o755;

// The first component of a path and the rest.
function split(rel: Buffer): { head: Buffer; rest: Buffer | null } {
  const slash = rel.indexOf(0x2f);
  return slash < 0 ? { head: rel, rest: null } : { head: rel.subarray(0, slash), rest: rel.subarray(slash + 1) };
}

/** The id of `root` (null: an empty tree) with `additions` in place. */
export async function addToTree(store: ObjectStore, root: string | null, additions: readonly Addition[]): Promise<string> {
  const nodes = root ? [...(await store.readTree(root))] : [];
  const byName = new Map(nodes.map((n, i) => [n.name.toString('latin1'), i]));
  const below = new Map<string, { name: Buffer; additions: Addition[] }>();
  for (const addition of additions) {
    const { head, rest } = split(addition.rel);
    const key = head.toString('latin1');
    if (rest === null) {
      if (byName.has(key)) throw new TreeEditError(`the revision already has ${addition.rel.toString()}`);
      byName.set(key, nodes.push(addition.node) - 1);
      continue;
    }
    const group = below.get(key) ?? { name: head, additions: [] };
    group.additions.push({ rel: rest, node: addition.node });
    below.set(key, group);
  }
  for (const [key, group] of below) {
    const at = byName.get(key);
    const existing = at === undefined ? undefined : nodes[at];
    if (existing && existing.type !== 'd') throw new TreeEditError(`${group.name.toString()} is not a directory`);
    const tree = await addToTree(store, existing?.type === 'd' ? existing.tree : null, group.additions);
    const node: TreeNode = { type: 'd', name: group.name, mode: existing?.type === 'd' ? existing.mode : NEW_DIRECTORY_MODE, tree };
    if (at === undefined) byName.set(key, nodes.push(node) - 1);
    else nodes[at] = node;
  }
  return (await store.putTree(nodes)).id;
}
