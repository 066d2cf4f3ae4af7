/**
 * A backfill revision in archive format 2: the planned legacy files become objects (each one's
 * SHA-256 must be the legacy store's checksum, and its size the listed size), they are added to
 * the current revision's trees (only the trees on their paths are written again), the verified
 * copies the live tree lacks are written into it, and the record is committed through the one
 * commit protocol, fenced on the generation and on the head the run started from. It runs as a
 * registered writer of the store (state/store-writers.ts): the current revision's root, whose
 * subtrees it shares by id, is declared, and what it writes is newer than its registration.
 */
import { commitRecord } from '../archive/commit-record.js';
import { addToTree } from '../archive/edit-tree.js';
import type { RevisionRecord } from '../archive/revision-record.js';
import { newRevisionId } from '../archive/revision-id.js';
import { BackfillDeferredError } from '../errors/backfill-deferred-error.js';
import { ChecksumMismatchError } from '../errors/checksum-mismatch-error.js';
import { StaleGenerationError } from '../errors/stale-generation-error.js';
import { asStoreWriter, type StoreWriter } from '../state/store-writers.js';
import type { CommittedRevision, RevisionDeps, RevisionInput } from './build-backfill-revision.js';
import { writeLiveFiles } from './live-target.js';

export async function buildBackfillRecord(deps: RevisionDeps, input: RevisionInput): Promise<CommittedRevision> {
  return asStoreWriter(deps.storeWriters, input.workspaceId, (writer) => buildAs(writer, deps, input));
}

async function buildAs(writer: StoreWriter, deps: RevisionDeps, input: RevisionInput): Promise<CommittedRevision> {
  const { workspaceId, target, signal, currentRevision } = input;
  const progress = input.progress ?? (async () => undefined);
  const store = deps.archive.objects;
  await deps.archive.ensure(workspaceId);
  const base = currentRevision ? await deps.archive.readRecord(workspaceId, currentRevision) : null;
  if (base) await writer.declare(base.root);
  const objects = new Map<string, string>();
  let done = 0;
  let bytes = 0;
  for (const file of input.copy) {
    signal.throwIfAborted();
    const stored = await store.putStream(await input.legacy.open(file));
    const expected = await input.legacy.checksum(file, signal);
    if (stored.id !== expected || stored.bytes !== file.size) throw new ChecksumMismatchError(workspaceId, file.path, expected, `${stored.id} (${stored.bytes} bytes)`);
    objects.set(file.path, stored.id);
    bytes += stored.bytes;
    if (++done % 100 === 0) await progress({ step: 'copy', done, total: input.copy.length, percent: 10 + Math.floor((done / input.copy.length) * 50) });
  }
  await progress({ step: 'verify', percent: 60 });
  const additions = input.copy.map((file) => {
    const slash = file.rel.lastIndexOf(0x2f);
    const name = file.rel.subarray(slash + 1);
    return { rel: file.rel, node: { type: 'f' as const, name, mode: file.mode & 0o1777, size: file.size, object: objects.get(file.path)!, mtimeNs: BigInt(Math.round(file.mtimeMs * 1e6)) } };
  });
  const root = await addToTree(store, base?.root ?? null, additions);
  if (target.live && input.writeLive.length > 0) {
    await progress({ step: 'live', percent: 75 });
    await writeLiveFiles(target.live.provider, target.live.address.handle, (file) => store.readObject(objects.get(file.path)!), input.writeLive, signal);
  }
  await progress({ step: 'commit', percent: 85 });
  const revision = newRevisionId(target.generation);
  const record: RevisionRecord = {
    format: 2,
    workspaceId,
    revision,
    generation: target.generation,
    reason: 'backfill',
    turnId: null,
    parent: currentRevision,
    mode: 'backfill',
    createdAt: new Date().toISOString(),
    scanStartedAt: base?.scanStartedAt ?? '0',
    root,
    files: (base?.files ?? input.current?.files ?? 0) + input.copy.length,
    bytes: (base?.bytes ?? input.current?.bytes ?? 0) + bytes,
    entries: (base?.entries ?? 0) + input.copy.length,
  };
  await commitRecord(deps, record, { head: input.head, signal }).catch((error: unknown) => {
    // A new incarnation started meanwhile: a fresh run picks its generation (and live tree).
    if (error instanceof StaleGenerationError) throw new BackfillDeferredError(`workspace ${workspaceId}: generation moved during the backfill`, { context: { workspaceId }, cause: error });
    throw error;
  });
  return { revision, files: record.files, bytes: record.bytes };
}
