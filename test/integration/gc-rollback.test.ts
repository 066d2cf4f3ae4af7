// GC never deletes what must stay (current, retained revisions, active/referenced bases, live
// sandboxes), dry runs list exactly what real runs remove, and rollback keeps history.
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GC_RUNNERS, runGc } from '../../src/gc/run-gc.js';
import { objectsKind } from '../../src/gc/objects-kind.js';
import { sha256 } from '../../src/archive/tree-object.js';
import type { GcKind } from '../../src/queues/gc.js';
import { livePaths } from '../../src/providers/local/live-paths.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';
import { readTree } from '../helpers/tree.js';
import { archivedMismatches, readArchivedTree } from '../helpers/archived.js';

const signal = () => AbortSignal.timeout(60_000);
const ids = (r: { items: readonly { id: string }[] }) => r.items.map((i) => i.id).sort();

// Runs a dry run then a real run of a kind and checks they agree.
async function gcAgree(h: Harness, kind: GcKind) {
  const dry = await runGc(h.services, { kind, dryRun: true, limit: 1_000 }, signal());
  const real = await runGc(h.services, { kind, dryRun: false, limit: 1_000 }, signal());
  expect(ids(real), `${kind}: dry run and real run agree`).toEqual(ids(dry));
  expect(real.bytes).toBe(dry.bytes);
  return real;
}

describe('gc', () => {
  it('retention keeps the newest N, everything younger than the minimum age and the current revision; dry run and real run agree', async () => {
    // The default minimum age (24 h): the old revisions are made old instead of the rule switched off.
    const h = await createHarness({ FLEET_KEEP_REVISIONS: '3' });
    await h.provision('ws');
    const revisions: string[] = [];
    for (let i = 0; i < 8; i++) {
      await h.write('ws', { 'counter.txt': `v${i}`, [`f${i}.bin`]: Buffer.alloc(1000, i) });
      revisions.push((await h.persist('ws')).revision!);
    }
    // The four oldest are two days old; the fifth oldest is beyond the newest 3 but young, so it stays.
    for (const revision of revisions.slice(0, 4)) {
      const record = (await h.services.checkpoints.byRevision('ws', 'portable_workspace', revision))!;
      await h.services.redis.hset(h.services.keys.checkpoint(h.services.keys.bucket('ws'), record.id), 'createdAt', String(Date.now() - 2 * 86_400_000));
    }
    const roots = new Map<string, string>();
    if (h.config.archiveFormat === 2) for (const revision of revisions) roots.set(revision, (await h.services.archive.readRecord('ws', revision))!.root);
    const removed = await gcAgree(h, 'retention');
    expect(ids(removed).length).toBe(4);
    expect(removed.bytes).toBeGreaterThan(0);
    const left = await h.services.archive.revisions('ws');
    expect(left).toEqual(revisions.slice(-4));
    const current = (await h.services.archive.current('ws'))!;
    expect(current).toBe(revisions[7]);
    expect(await archivedMismatches(h.services.archive, 'ws', current)).toEqual([]);
    expect(await runGc(h.services, { kind: 'retention', dryRun: true, limit: 1_000 }, signal())).toMatchObject({ count: 0 });
    if (h.config.archiveFormat === 2) {
      // Format 2 removed only the records: the objects GC (no grace) then takes what only they reached, and nothing else.
      const objects = await runGc(h.services, { kind: 'objects', dryRun: false, limit: 1_000 }, signal(), { ...GC_RUNNERS, objects: objectsKind({ graceMs: 0 }) });
      const removedObjects = objects.items.filter((i) => i.description.startsWith('unreachable object')).map((i) => i.id).sort();
      expect(removedObjects).toEqual(['v0', 'v1', 'v2', 'v3'].map((v) => sha256(Buffer.from(v))).sort());
      // Their root trees went too (each named a different counter.txt), except one a kept root is a patch of (kept as its base).
      const bases = new Set(await Promise.all(left.map(async (r) => (await h.services.archive.objects.loadTree(roots.get(r)!)).base)));
      const goneRoots = revisions.slice(0, 4).map((r) => roots.get(r)!).filter((root) => !bases.has(root));
      expect(objects.items.filter((i) => i.description.startsWith('unreachable tree')).map((i) => i.id).sort()).toEqual(goneRoots.sort());
      expect(goneRoots.length).toBeGreaterThanOrEqual(3);
      for (const revision of left) expect(await archivedMismatches(h.services.archive, 'ws', revision), revision).toEqual([]);
    }
  });

  it('retention never removes revisions younger than the minimum age', async () => {
    const h = await createHarness({ FLEET_KEEP_REVISIONS: '1', FLEET_KEEP_REVISIONS_MIN_AGE_MS: '86400000' });
    await h.provision('ws');
    for (let i = 0; i < 4; i++) {
      await h.write('ws', { 'x.txt': `${i}` });
      await h.persist('ws');
    }
    expect((await gcAgree(h, 'retention')).count).toBe(0);
    expect(await h.services.archive.revisions('ws')).toHaveLength(4);
  });

  it('unattached checkpoints and litter go; attached ones, young litter and current stay', async () => {
    const h = await createHarness({ FLEET_UNATTACHED_GRACE_MS: '0' });
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'a' });
    const kept = await h.persist('ws');
    // An upload that was recorded but never attached (its persist died before attach).
    await h.write('ws', { 'b.txt': 'b' });
    const orphanRevision = (await h.persist('ws', { generation: 1 })).revision!;
    const orphanRecord = (await h.services.checkpoints.byRevision('ws', 'portable_workspace', orphanRevision))!;
    await h.services.checkpoints.rollbackCurrent('ws', orphanRecord.id, 1);
    await h.services.archive.flipCurrent('ws', kept.revision!);
    const paths = h.services.archive.paths('ws');
    const oldLitter = paths.tmp('r20200101T000000000Z-g1-oldold');
    const youngLitter = paths.tmp('r20990101T000000000Z-g1-young1');
    for (const dir of [oldLitter, youngLitter]) {
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'partial'), 'x'.repeat(100));
    }
    const longAgo = new Date(Date.now() - 48 * 3_600_000);
    await utimes(oldLitter, longAgo, longAgo);

    const unattached = await gcAgree(h, 'unattached');
    expect(ids(unattached)).toEqual([orphanRevision]);
    expect(await h.services.archive.revisions('ws')).toEqual([kept.revision]);
    const litter = await gcAgree(h, 'litter');
    expect(ids(litter)).toEqual([oldLitter]);
    expect(await h.services.archive.temporaries('ws')).toEqual([path.basename(youngLitter)]);
    expect(await h.services.archive.current('ws')).toBe(kept.revision);
    expect((await h.services.checkpoints.current('ws'))?.workspaceRevision).toBe(kept.revision);
  });

  it('bases: active, rollback candidate, referenced and young bases stay; an old unreferenced one is retired', async () => {
    // The default retention (14 days): bases are made old instead of the rule switched off.
    const h = await createHarness();
    const day = 86_400_000;
    const makeBase = async (id: string, ageMs = 15 * day) => {
      await mkdir(path.join(h.config.paths.snapshotRoot, id, 'tree'), { recursive: true });
      await writeFile(path.join(h.config.paths.snapshotRoot, id, 'tree', 'f'), id);
      await h.services.bases.register({ provider: 'local', snapshotId: id, version: id, manifestHash: id, name: 'b', runtime: 'node22', lane: 'default', status: 'ready', sourceSandboxId: null, error: null, createdAt: Date.now() - ageMs, readyAt: Date.now(), expiresAt: null });
    };
    for (const id of ['old', 'referenced', 'candidate', 'active']) await makeBase(id);
    await makeBase('young', 13 * day);
    await h.services.bases.activate('referenced');
    await h.provision('user-ws'); // created from 'referenced'
    await h.services.bases.activate('candidate');
    await h.services.bases.activate('active'); // candidate becomes the rollback candidate
    const retired = await gcAgree(h, 'bases');
    expect(ids(retired)).toEqual(['old']);
    expect((await h.services.bases.get('old'))?.status).toBe('retired');
    for (const id of ['referenced', 'candidate', 'active', 'young']) expect((await h.services.bases.get(id))?.status).toBe('ready');
    await expect(readFile(path.join(h.config.paths.snapshotRoot, 'referenced', 'tree', 'f'), 'utf8')).resolves.toBe('referenced');
  });

  it('orphans: sandboxes missing from the address store go; live ones and young ones stay', async () => {
    const h = await createHarness();
    const live = await h.provision('live');
    const local = h.services.providers.get('local');
    const orphan = await local.create({ workspaceId: 'lost', generation: 1, source: { type: 'empty' }, signal: signal() });
    const young = await local.create({ workspaceId: 'young', generation: 1, source: { type: 'empty' }, signal: signal() });
    // Backdate the orphan's creation (instead of waiting for the provision deadline).
    const meta = livePaths(h.config.paths.liveRoot, 'lost').sandbox;
    await writeFile(meta, JSON.stringify({ ...JSON.parse(await readFile(meta, 'utf8')), createdAt: Date.now() - 3_600_000 }));
    const removed = await gcAgree(h, 'orphans');
    expect(ids(removed)).toEqual([orphan.handle]);
    const left = (await local.list(signal())).map((s) => s.handle).sort();
    expect(left).toEqual([live.handle, young.handle].sort());
  });
});

describe('rollback', () => {
  it('makes an earlier revision current as a new revision, keeps history, restores the live tree', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'doc.txt': 'first draft', 'keep.txt': 'k' });
    const first = await h.persist('ws');
    await h.write('ws', { 'doc.txt': 'second draft', 'extra.txt': 'x' });
    const second = await h.persist('ws');
    await testWorkers(h.config, ['persist']);
    const { result } = await h.services.client.rollback({ workspaceId: 'ws', revision: first.revision! }, { wait: true, timeoutMs: 30_000 });
    expect(result).toMatchObject({ restoredFrom: first.revision, generation: 1 });
    expect(result!.revision).not.toBe(first.revision);
    expect(await h.services.archive.revisions('ws')).toEqual([first.revision, second.revision, result!.revision].sort());
    expect(await readArchivedTree(h.services.archive, 'ws')).toEqual(await readArchivedTree(h.services.archive, 'ws', first.revision!));
    expect(await readFile(path.join(h.live('ws'), 'doc.txt'), 'utf8')).toBe('first draft');
    expect(await readTree(h.live('ws'))).toEqual(await readArchivedTree(h.services.archive, 'ws'));
    expect((await h.services.checkpoints.current('ws'))?.reason).toBe('rollback');
    // The workspace keeps working: a persist after the rollback is accepted.
    await h.write('ws', { 'after.txt': 'a' });
    expect((await h.persist('ws')).unchanged).toBe(false);
    // Unknown revision and stale generation are refused.
    const bad = await h.services.client.rollback({ workspaceId: 'ws', revision: 'r20200101T000000000Z-g1-nope00' }, { wait: true, timeoutMs: 30_000 }).catch((e: { code: string }) => e.code);
    expect(bad).toBe('RevisionNotFound');
    const stale = await h.services.client.rollback({ workspaceId: 'ws', revision: first.revision!, generation: 9 }, { wait: true, timeoutMs: 30_000 }).catch((e: { code: string }) => e.code);
    expect(stale).toBe('StaleGeneration');
  });
});
