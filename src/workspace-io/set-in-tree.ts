/**
 * Puts one node at a path of a format 2 tree, or takes the path away: the trees on the way are
 * written again, every other subtree stays shared by id. Missing directories are made (0755); a
 * file or symlink where a directory is needed is refused (the path cannot exist), never replaced.
 */
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import type { ObjectStore } from '../archive/object-store.js';
import type { TreeNode } from '../archive/tree-object.js';

const NEW_DIRECTORY_MODE = 0o755;

export interface TreeChange {
  /** The new root tree id. */
  readonly root: string;
  /** The node that was at the path before (null: nothing). */
  readonly previous: TreeNode | null;
  /** Directories made on the way. */
  readonly createdDirs: number;
}

/** `root` (null: empty) with `node` at `parts` (null: removed). */
export async function setInTree(store: ObjectStore, root: string | null, parts: readonly string[], node: TreeNode | null, path = parts.join('/')): Promise<TreeChange> {
  const nodes = root ? [...(await store.readTree(root))] : [];
  const [head, ...rest] = parts;
  const name = Buffer.from(head!);
  const at = nodes.findIndex((n) => n.name.equals(name));
  const existing = at < 0 ? null : nodes[at]!;
  let previous: TreeNode | null;
  let replacement: TreeNode | null;
  let createdDirs = 0;
  if (rest.length === 0) {
    previous = existing;
    replacement = node ? { ...node, name } : null;
  } else {
    if (existing && existing.type !== 'd') {
      throw new PayloadInvalidError('path', [{ field: 'path', message: `${head} is not a directory in the revision`, value: path }]);
    }
    if (!existing && !node) return { root: root ?? (await store.putTree([])).id, previous: null, createdDirs: 0 };
    const below = await setInTree(store, existing?.type === 'd' ? existing.tree : null, rest, node, path);
    previous = below.previous;
    createdDirs = below.createdDirs + (existing ? 0 : 1);
    replacement = { type: 'd', name, mode: existing?.type === 'd' ? existing.mode : NEW_DIRECTORY_MODE, tree: below.root };
  }
  if (at >= 0) nodes.splice(at, 1);
  if (replacement) nodes.push(replacement);
  return { root: (await store.putTree(nodes)).id, previous, createdDirs };
}
