// A format 2 rollback names its source's root tree by reference and declares it as a root of the
// objects GC (state/store-writers.ts). Here the source's record is removed (as retention would)
// and a grace-0 objects GC runs right before the rollback writes its record: the declared root
// keeps everything the new revision reaches, verify is clean and the live tree is the source's.
// Control: with the declaration dropped, the same GC deletes the source's objects and trees.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RevisionRecord } from '../../src/archive/revision-record.js';
import { verifyRevisions } from '../../src/archive/verify-revisions.js';
import { rollbackWorkspace } from '../../src/persist/rollback-workspace.js';
import type { StoreWriters } from '../../src/state/store-writers.js';
import { backdate, objectsGc, reachedBy } from '../helpers/gc-objects.js';
import { readTree } from '../helpers/tree.js';
import { createHarness } from '../helpers/workspace-harness.js';

async function rollbackUnderGc(options: { undeclared?: boolean } = {}) {
  const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
  await h.provision('ws');
  await h.write('ws', { 'doc.txt': 'first draft', 'dir/a.txt': 'only the first revision has this' });
  const first = (await h.persist('ws')).revision!;
  await rm(path.join(h.live('ws'), 'dir'), { recursive: true });
  await h.write('ws', { 'doc.txt': 'second draft' });
  await h.persist('ws');
  backdate(path.join(h.config.paths.archiveRoot, '.store'));

  const { archive } = h.services;
  const writeRecord = archive.writeRecord.bind(archive);
  const removed: string[] = [];
  // Right before the rollback's record is written: the source's record goes, and the GC runs.
  archive.writeRecord = async (record: RevisionRecord) => {
    if (record.mode === 'rollback') {
      await rm(archive.paths('ws').record(first));
      removed.push(...(await objectsGc(h)).items.map((i) => i.id));
    }
    return writeRecord(record);
  };
  if (options.undeclared) {
    const begin = h.services.storeWriters.begin.bind(h.services.storeWriters);
    Object.assign(h.services.storeWriters, {
      begin: async (...args: Parameters<StoreWriters['begin']>) => ({ ...(await begin(...args)), declare: async () => undefined }),
    });
  }
  const address = (await h.services.addresses.get('ws'))!;
  const outcome = await rollbackWorkspace(h.services, { workspaceId: 'ws', generation: address.generation, revision: first }, h.ctx()).then(
    (result) => ({ revision: result.revision, failure: null }),
    (error: unknown) => ({ revision: null, failure: error }),
  );
  return { h, removed, outcome };
}

describe('objects GC during a format 2 rollback', () => {
  it('the declared source root keeps what the new revision reaches, with the source record removed meanwhile', { timeout: 120_000 }, async () => {
    const { h, removed, outcome } = await rollbackUnderGc();
    expect(outcome.failure).toBeNull();
    const needed = await reachedBy(h, 'ws', outcome.revision!);
    expect(needed.size).toBeGreaterThan(0);
    expect(removed.filter((id) => needed.has(id))).toEqual([]);
    const verified = await verifyRevisions({ archive: h.services.archive, history: h.services.checkpoints }, ['ws'], { missingFormat: 2 });
    expect(verified.problems.filter((p) => p.revision === outcome.revision)).toEqual([]);
    expect(await readTree(h.live('ws'))).toMatchObject({ 'doc.txt': Buffer.from('first draft').toString('base64') });
  });

  it('control: without the declaration the GC deletes the source tree the rollback names', { timeout: 120_000 }, async () => {
    const { h, removed, outcome } = await rollbackUnderGc({ undeclared: true });
    // The record is committed; restoring from it then fails, and verify names the missing root.
    const { archive } = h.services;
    const records = await Promise.all((await archive.records('ws')).map((r) => archive.readRecord('ws', r)));
    const rollback = records.find((r) => r?.mode === 'rollback')!;
    expect(removed).toContain(rollback.root);
    expect(outcome.failure).toMatchObject({ code: 'ProviderGone' });
    const verified = await verifyRevisions({ archive, history: h.services.checkpoints }, ['ws'], { missingFormat: 2 });
    expect(verified.problems).toContainEqual(expect.objectContaining({ revision: rollback.revision, problem: 'tree-missing', object: rollback.root }));
  });
});
