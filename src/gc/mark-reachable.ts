/**
 * The mark of the objects GC: every tree and object reachable from every format 2 revision
 * record of every workspace (attached or not: a record is a root until it is removed), and from
 * the roots that writers in flight declared. Each distinct tree is read from disk, checked
 * against its id, once. A record that does not parse, or a tree a record reaches that cannot be
 * read, makes the mark incomplete (`GcMarkIncompleteError`): what lies below it cannot be told
 * apart from garbage, so nothing may be deleted.
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import { errnoOf } from '../errors/classify-storage-error.js';
import { GcMarkIncompleteError } from '../errors/gc-mark-incomplete-error.js';
import { mapBounded } from '../lib/map-bounded.js';
import { IdSet } from './id-set.js';

/** Trees read at once. */
const READ_CONCURRENCY = 8;

export interface Reachable {
  readonly trees: IdSet;
  readonly objects: IdSet;
  /** Records read (the roots). */
  readonly revisions: number;
  /** Bytes of the reachable objects (each counted once). */
  readonly bytes: number;
}

export interface MarkOptions {
  /** Root trees in-flight writers build on by reference (a missing one protects nothing and is skipped). */
  readonly declaredRoots: readonly string[];
  readonly signal: AbortSignal;
}

// What went wrong reading `root`'s trees, for the incomplete-mark error.
interface RootLabel {
  readonly workspaceId?: string;
  readonly revision?: string;
}

export async function markReachable(archive: ArchiveStore, options: MarkOptions): Promise<Reachable> {
  const trees = new IdSet();
  const objects = new IdSet();
  let bytes = 0;
  let revisions = 0;

  // Marks everything below `root` that is not marked yet, level by level.
  const markFrom = async (root: string, label: RootLabel, optional: boolean): Promise<void> => {
    if (trees.has(root)) return;
    let frontier = [root];
    let first = true;
    while (frontier.length > 0) {
      const next: string[] = [];
      await mapBounded(frontier, READ_CONCURRENCY, async (id) => {
        options.signal.throwIfAborted();
        let nodes;
        try {
          nodes = await archive.objects.loadTree(id);
        } catch (error) {
          // A declared root that no longer exists protects nothing (its writer fails or already committed).
          if (optional && first && errnoOf(error) === 'ENOENT') return;
          throw new GcMarkIncompleteError(`tree ${id} (reached from ${describe(label)}) cannot be read: ${errnoOf(error) ?? (error as Error).message}; nothing is deleted until it is repaired (see fleet verify)`, {
            context: { ...label, tree: id, reason: errnoOf(error) ?? (error as Error).name },
            cause: error,
          });
        }
        trees.add(id);
        for (const node of nodes) {
          if (node.type === 'd' && !trees.has(node.tree)) next.push(node.tree);
          else if (node.type === 'f' && objects.add(node.object)) bytes += node.size;
        }
      });
      first = false;
      // A tree named twice in one level is read once.
      frontier = [...new Set(next)].filter((id) => !trees.has(id));
    }
  };

  for (const workspaceId of await archive.workspaces()) {
    for (const revision of await archive.records(workspaceId)) {
      options.signal.throwIfAborted();
      let record;
      try {
        record = await archive.readRecord(workspaceId, revision);
      } catch (error) {
        throw new GcMarkIncompleteError(`revision record ${workspaceId}/${revision} cannot be read: ${(error as Error).message}; nothing is deleted until it is repaired or removed (see fleet verify)`, {
          context: { workspaceId, revision, reason: errnoOf(error) ?? (error as Error).name },
          cause: error,
        });
      }
      // Removed since it was listed: no longer a root.
      if (!record) continue;
      revisions += 1;
      await markFrom(record.root, { workspaceId, revision }, false);
    }
  }
  for (const root of options.declaredRoots) await markFrom(root, {}, true);
  return { trees, objects, revisions, bytes };
}

const describe = (label: RootLabel) => (label.workspaceId ? `revision ${label.workspaceId}/${label.revision}` : 'a root declared by a writer in flight');
