/**
 * The mark of the objects GC: every tree and object reachable from every format 2 revision
 * record (attached or not: a record is a root until it is removed; records of archives a reset
 * moved aside too, archive/reset-aside.ts), from every baked base's record (archive/base-roots.ts,
 * until the base is retired), and from the roots that writers in flight declared.
 * Each distinct tree is read from disk, checked against its id, once. A record that does not
 * parse, or a tree a record reaches that cannot be read, makes the mark incomplete
 * (`GcMarkIncompleteError`): what lies below it cannot be told apart from garbage, so nothing
 * may be deleted.
 *
 * The order closes the race with writers that commit while the mark runs, and with revisions
 * removed while it runs: (1) every record listed and marked; (2) the roots writers declared, read
 * after (1); (3) the records listed again and the new ones marked, until a listing finds none
 * (at most `MAX_PASSES` listings, else the mark is incomplete). A writer that left the registry
 * before (2) wrote its record before (3); one registered at (2) had declared its basis or source;
 * one that registers after (2) builds on a revision that is current (nothing removes a current
 * revision) or that it checks again after declaring it (a rollback's source), so a listing
 * reaches it. A record listed but removed before it was read was superseded by a newer record
 * naming what it shared, which the next listing finds.
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import { asideRecords, readAsideRecord } from '../archive/reset-aside.js';
import type { RevisionRecord } from '../archive/revision-record.js';
import { errnoOf } from '../errors/classify-storage-error.js';
import { GcMarkIncompleteError } from '../errors/gc-mark-incomplete-error.js';
import { mapBounded } from '../lib/map-bounded.js';
import { IdSet } from './id-set.js';

/** Trees read at once. */
const READ_CONCURRENCY = 8;
/** Listings of the records in one mark; more means the archive kept changing under it (tried again next run). */
const MAX_PASSES = 8;

export interface Reachable {
  readonly trees: IdSet;
  readonly objects: IdSet;
  /** Records read (the roots). */
  readonly revisions: number;
  /** Bytes of the reachable objects (each counted once). */
  readonly bytes: number;
}

export interface MarkOptions {
  /**
   * Root trees in-flight writers build on by reference, asked for once the records are marked
   * (a missing one protects nothing and is skipped).
   */
  readonly declaredRoots: () => Promise<readonly string[]>;
  readonly signal: AbortSignal;
}

// Where a root came from, for the incomplete-mark error.
interface RootLabel {
  readonly workspaceId?: string;
  readonly revision?: string;
  /** The `.reset/` directory of a record moved aside. */
  readonly aside?: string;
  /** A baked base's record. */
  readonly base?: string;
}

// One record to mark from: a key unique across the archive, its label, and how to read it.
interface RecordRef {
  readonly key: string;
  readonly label: RootLabel;
  read(): Promise<Pick<RevisionRecord, 'root'> | null>;
}

// Every record of the archive now: the workspaces', then those moved aside by resets.
async function listRecords(archive: ArchiveStore): Promise<RecordRef[]> {
  const refs: RecordRef[] = [];
  for (const workspaceId of await archive.workspaces()) {
    for (const revision of await archive.records(workspaceId)) {
      refs.push({ key: `${workspaceId}/${revision}`, label: { workspaceId, revision }, read: () => archive.readRecord(workspaceId, revision) });
    }
  }
  for (const ref of await asideRecords(archive.root)) {
    refs.push({ key: `.reset/${ref.aside}/${ref.revision}`, label: ref, read: () => readAsideRecord(archive.root, ref) });
  }
  for (const snapshotId of await archive.bases.list()) {
    refs.push({ key: `.bases/${snapshotId}`, label: { base: snapshotId }, read: () => archive.bases.read(snapshotId) });
  }
  return refs;
}

export async function markReachable(archive: ArchiveStore, options: MarkOptions): Promise<Reachable> {
  const trees = new IdSet();
  const objects = new IdSet();
  let bytes = 0;
  let revisions = 0;

  // Trees whose entries are marked (`trees` also holds the bases of patched trees, kept as data:
  // what a base's entries name is reachable only where a tree reached as a directory names it).
  const walked = new IdSet();
  // Marks everything below `root` that is not marked yet, level by level.
  const markFrom = async (root: string, label: RootLabel, optional: boolean): Promise<void> => {
    if (walked.has(root)) return;
    let frontier = [root];
    let first = true;
    while (frontier.length > 0) {
      const next: string[] = [];
      await mapBounded(frontier, READ_CONCURRENCY, async (id) => {
        options.signal.throwIfAborted();
        let nodes, base;
        try {
          ({ nodes, base } = await archive.objects.loadTree(id));
        } catch (error) {
          // A declared root that no longer exists protects nothing (its writer fails or already committed).
          if (optional && first && errnoOf(error) === 'ENOENT') return;
          throw new GcMarkIncompleteError(`tree ${id} (reached from ${describe(label)}) cannot be read: ${errnoOf(error) ?? (error as Error).message}; nothing is deleted until it is repaired (see fleet verify)`, {
            context: { ...label, tree: id, reason: errnoOf(error) ?? (error as Error).name },
            cause: error,
          });
        }
        walked.add(id);
        trees.add(id);
        if (base !== null) trees.add(base);
        for (const node of nodes) {
          if (node.type === 'd' && !walked.has(node.tree)) next.push(node.tree);
          else if (node.type === 'f' && objects.add(node.object)) bytes += node.size;
        }
      });
      first = false;
      // A tree named twice in one level is read once.
      frontier = [...new Set(next)].filter((id) => !walked.has(id));
    }
  };

  // Marks from every record not marked yet; returns how many were new.
  const seen = new Set<string>();
  const markRecords = async (): Promise<number> => {
    const fresh = (await listRecords(archive)).filter((ref) => !seen.has(ref.key));
    for (const ref of fresh) {
      seen.add(ref.key);
      options.signal.throwIfAborted();
      let record;
      try {
        record = await ref.read();
      } catch (error) {
        throw new GcMarkIncompleteError(`revision record ${describe(ref.label)} cannot be read: ${(error as Error).message}; nothing is deleted until it is repaired or removed (see fleet verify)`, {
          context: { ...ref.label, reason: errnoOf(error) ?? (error as Error).name },
          cause: error,
        });
      }
      // Removed since it was listed: no longer a root.
      if (!record) continue;
      revisions += 1;
      await markFrom(record.root, ref.label, false);
    }
    return fresh.length;
  };

  await markRecords();
  for (const root of await options.declaredRoots()) await markFrom(root, {}, true);
  for (let pass = 2; (await markRecords()) > 0; pass++) {
    if (pass >= MAX_PASSES) {
      throw new GcMarkIncompleteError(`revision records kept appearing through ${MAX_PASSES} listings; nothing is deleted this run`, { context: { reason: 'records-changing' } });
    }
  }
  return { trees, objects, revisions, bytes };
}

const describe = (label: RootLabel) =>
  label.base ? `base ${label.base}` : label.aside ? `revision ${label.revision} moved aside in .reset/${label.aside}` : label.workspaceId ? `revision ${label.workspaceId}/${label.revision}` : 'a root declared by a writer in flight';
