/**
 * A write (or removal) of one file while no sandbox is live: a new revision whose trees are the
 * current revision's with that one path edited, committed by the one commit protocol
 * (commit-record.ts). Safe only because nothing live exists, so that is made atomic against a
 * provision: under the workspace's provision lock (efficiency), the workspace is *claimed*: one
 * script refuses when an address is published and otherwise bumps the generation. A provision
 * that began before the claim can no longer publish (its generation is stale: it is superseded
 * and runs again, restoring this revision); one that begins after the claim restores this
 * revision, or, if it bumps before the attach, makes the attach fail (StaleGeneration, retried
 * by the caller) so the write never lands beside a live tree. Returns null when a sandbox is live
 * (the caller writes warm).
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import { commitRecord } from '../archive/commit-record.js';
import { flattenTree } from '../archive/revision-reader.js';
import { newRevisionId } from '../archive/revision-id.js';
import type { RevisionRecord } from '../archive/revision-record.js';
import type { TreeNode } from '../archive/tree-object.js';
import { NotImplementedError } from '../errors/not-implemented-error.js';
import type { SingleFlight } from '../locks/single-flight.js';
import type { AddressStore } from '../state/address-store.js';
import type { CheckpointStore } from '../state/checkpoint-store.js';
import { asStoreWriter, type StoreWriters } from '../state/store-writers.js';
import { setInTree } from './set-in-tree.js';
import { anySignal } from '../lib/any-signal.js';

export interface ColdWriteDeps {
  readonly addresses: Pick<AddressStore, 'claimCold'>;
  readonly archive: ArchiveStore;
  readonly checkpoints: Pick<CheckpointStore, 'current' | 'record' | 'attach'>;
  readonly storeWriters: Pick<StoreWriters, 'begin'>;
  readonly singleFlight: Pick<SingleFlight, 'using'>;
  readonly systemPath: string;
}

export interface ColdEdit {
  readonly workspaceId: string;
  readonly path: string;
  readonly parts: readonly string[];
  /** The new content; null removes the path (a file, a symlink or a whole directory). */
  readonly content: Buffer | null;
  readonly mode?: number;
  readonly signal: AbortSignal;
}

export interface ColdWriteResult {
  readonly revision: string;
  readonly generation: number;
  /** What was at the path before (null: nothing). */
  readonly previous: TreeNode | null;
}

const WRITABLE_MODE_BITS = 0o1777;

// Files, bytes and entries below and including `node` (what removing it takes away).
async function weightOf(archive: ArchiveStore, node: TreeNode | null): Promise<{ files: number; bytes: number; entries: number }> {
  if (!node) return { files: 0, bytes: 0, entries: 0 };
  if (node.type === 'f') return { files: 1, bytes: node.size, entries: 1 };
  if (node.type !== 'd') return { files: 0, bytes: 0, entries: 1 };
  const below = await flattenTree(archive.objects, node.tree);
  return below.reduce((sum, e) => ({ files: sum.files + (e.t === 'f' ? 1 : 0), bytes: sum.bytes + (e.t === 'f' ? (e.s ?? 0) : 0), entries: sum.entries + 1 }), { files: 0, bytes: 0, entries: 1 });
}

export async function coldWrite(deps: ColdWriteDeps, edit: ColdEdit): Promise<ColdWriteResult | null> {
  const { workspaceId } = edit;
  return deps.singleFlight.using(`provision:${workspaceId}`, async (lock) => {
    const signal = anySignal([edit.signal, lock.signal]);
    const head = await deps.checkpoints.current(workspaceId);
    const parentId = head?.workspaceRevision ?? (await deps.archive.current(workspaceId));
    const parent = parentId ? await deps.archive.readRecord(workspaceId, parentId) : null;
    if (parentId && !parent) throw new NotImplementedError(`a cold write over the format 1 revision ${parentId} (run \`fleet archive migrate\`, or provision and write warm)`);
    const generation = await deps.addresses.claimCold(workspaceId, Math.max(head?.generation ?? 0, parent?.generation ?? 0));
    if (generation === null) return null;
    await deps.archive.ensure(workspaceId);
    return asStoreWriter(deps.storeWriters, workspaceId, async (writer) => {
      if (parent) await writer.declare(parent.root);
      const node: TreeNode | null = edit.content
        ? { type: 'f', name: Buffer.alloc(0), mode: (edit.mode ?? 0o644) & WRITABLE_MODE_BITS, size: edit.content.length, object: (await deps.archive.objects.putBytes(edit.content)).id, mtimeNs: BigInt(Date.now()) * 1_000_000n }
        : null;
      const change = await setInTree(deps.archive.objects, parent?.root ?? null, edit.parts, node, edit.path);
      const removed = await weightOf(deps.archive, change.previous);
      const revision = newRevisionId(generation);
      const record: RevisionRecord = {
        format: 2,
        workspaceId,
        revision,
        generation,
        reason: edit.content ? 'file-write' : 'file-remove',
        turnId: null,
        parent: parentId,
        mode: 'write',
        createdAt: new Date().toISOString(),
        // The written file's mtime is now: a quick check against it must hash it (racily clean).
        scanStartedAt: (BigInt(Date.now()) * 1_000_000n).toString(),
        root: change.root,
        files: (parent?.files ?? 0) - removed.files + (node ? 1 : 0),
        bytes: (parent?.bytes ?? 0) - removed.bytes + (edit.content?.length ?? 0),
        entries: (parent?.entries ?? 0) - removed.entries + (node ? 1 : 0) + change.createdDirs,
      };
      await commitRecord({ archive: deps.archive, checkpoints: deps.checkpoints, systemPath: deps.systemPath }, record, { head, signal });
      return { revision, generation, previous: change.previous };
    });
  });
}
