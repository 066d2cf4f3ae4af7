// A format 2 backfill writes the legacy files as objects and adds them to the current revision's
// trees (sharing the rest by id); it runs as a registered writer of the store with that root
// declared. A grace-0 objects GC right before the backfill writes its record deletes nothing the
// backfilled revision reaches. Control: an unregistered backfill loses its new objects.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RevisionRecord } from '../../src/archive/revision-record.js';
import { verifyRevisions } from '../../src/archive/verify-revisions.js';
import { backfillDeps } from '../../src/app/backfill-deps.js';
import { backfillWorkspace } from '../../src/backfill/backfill-workspace.js';
import type { StoreWriters } from '../../src/state/store-writers.js';
import { archivedMismatches } from '../helpers/archived.js';
import { backdate, objectsGc, reachedBy } from '../helpers/gc-objects.js';
import { writeLegacyWorkspace } from '../helpers/legacy-store.js';
import { createHarness } from '../helpers/workspace-harness.js';

const unregistered: Pick<StoreWriters, 'begin'> = { begin: async () => ({ token: 'none', startedAt: Date.now(), declare: async () => undefined, end: async () => undefined }) };

async function backfillUnderGc(options: { unregistered?: boolean } = {}) {
  const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
  await h.provision('ws');
  await h.write('ws', { 'archived.txt': 'already in the archive', 'dir/kept.txt': 'kept' });
  await h.persist('ws');
  backdate(path.join(h.config.paths.archiveRoot, '.store'));
  await writeLegacyWorkspace(h.config.paths.legacyRoot, 'ws', [
    ['legacy/one.txt', 'from the legacy store'],
    ['dir/two.txt', 'also from the legacy store'],
  ]);
  const { archive } = h.services;
  const writeRecord = archive.writeRecord.bind(archive);
  const removed: string[] = [];
  archive.writeRecord = async (record: RevisionRecord) => {
    if (record.mode === 'backfill') removed.push(...(await objectsGc(h)).items.map((i) => i.id));
    return writeRecord(record);
  };
  const deps = { ...backfillDeps(h.services), ...(options.unregistered ? { storeWriters: unregistered } : {}) };
  const result = await backfillWorkspace(deps, { workspaceId: 'ws', source: 'blob' }, h.ctx());
  expect(result).toMatchObject({ status: 'migrated', copiedFiles: 2 });
  return { h, removed, revision: result.revision! };
}

describe('objects GC during a format 2 backfill', () => {
  it('a registered backfill keeps everything its revision reaches', { timeout: 120_000 }, async () => {
    const { h, removed, revision } = await backfillUnderGc();
    const needed = await reachedBy(h, 'ws', revision);
    expect(removed.filter((id) => needed.has(id))).toEqual([]);
    expect(await archivedMismatches(h.services.archive, 'ws', revision)).toEqual([]);
  });

  it('control: an unregistered backfill loses the objects it wrote', { timeout: 120_000 }, async () => {
    const { h, removed, revision } = await backfillUnderGc({ unregistered: true });
    // Its new root tree (and the objects below it) went: verify names the revision.
    const record = (await h.services.archive.readRecord('ws', revision))!;
    expect(removed).toContain(record.root);
    const verified = await verifyRevisions({ archive: h.services.archive, history: h.services.checkpoints }, ['ws'], { missingFormat: 2 });
    expect(verified.problems).toContainEqual(expect.objectContaining({ revision, problem: 'tree-missing', object: record.root }));
  });
});
