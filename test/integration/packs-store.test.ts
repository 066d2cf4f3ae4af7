// Small objects written as packs (FLEET_ARCHIVE_PACKS; docs/archive-format.md, "Packs") on a
// real store: a first persist through the writer thread makes the same revision as one that
// places every object as its own file, its objects in packs (only one too large for a pack is a
// file); a restore through tar reads them from the packs and makes the source tree
// exactly; a second persist of the same content in another store reuses the packs it lists and
// refreshes them for the GC; every other reader (materialising, readObject, openObject, verify)
// takes packed objects; the objects GC takes whole unreachable packs and orphaned pack files,
// puts back a pack reused since it looked, and undoes a GC that died.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, rename, stat, truncate, utimes } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractRevision } from '../../src/archive/extract-revision.js';
import { materializeRevision } from '../../src/archive/materialize-revision.js';
import { ObjectStore } from '../../src/archive/object-store.js';
import { StoreChecker } from '../../src/archive/verify-store.js';
import { PackIndex } from '../../src/archive/pack-index.js';
import { quarantineName } from '../../src/archive/archive-paths.js';
import { IdSet } from '../../src/gc/id-set.js';
import { findUnreachable, recoverQuarantined, removeUnreachable, REPACK_DEAD_SHARE } from '../../src/gc/sweep-store.js';
import { repackPack } from '../../src/gc/repack-pack.js';
import { sha256 } from '../../src/archive/tree-object.js';
import { StoreBuilder } from '../../src/archive/store-builder.js';
import type { DirNode, FileNode } from '../../src/archive/tree-object.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { UNLIMITED_TREE } from '../../src/tree/tree-limits.js';
import { tempDir } from '../helpers/fleet-env.js';
import { contentFacts, describeTree } from '../helpers/portable-tree.js';

async function sourceTree(): Promise<string> {
  const source = await tempDir('packs-src');
  for (let d = 0; d < 20; d++) {
    mkdirSync(path.join(source, `d${d}`));
    for (let i = 0; i < 100; i++) writeFileSync(path.join(source, `d${d}`, `f${i}`), `file ${d}/${i} `.repeat(1 + ((d * i) % 300)));
  }
  writeFileSync(path.join(source, 'large'), Buffer.alloc(300_000, 9));
  return source;
}

async function build(store: ObjectStore, source: string) {
  const src = await DirHandle.open(source);
  try {
    // The writer thread runs before the walk starts: every small object goes through it, however slow it is to start.
    const builder = new StoreBuilder({ store, basis: null, cache: null, keepMissing: false, limits: UNLIMITED_TREE, signal: AbortSignal.timeout(60_000), writerAfter: 0, writerFirst: true });
    return { root: await builder.build(src), newObjects: builder.newObjects };
  } finally {
    await src.close();
  }
}

async function looseObjects(store: ObjectStore): Promise<number> {
  let count = 0;
  const dir = store.kindDir('object');
  for (const fanout of await readdir(dir).catch(() => [])) count += (await readdir(path.join(dir, fanout))).length;
  return count;
}

describe('packs in the store', () => {
  it('a first persist packs its small objects: the same revision; a restore through tar reads them and makes the tree exactly', async () => {
    const source = await sourceTree();
    const loose = new ObjectStore(await tempDir('packs-loose'));
    const packed = new ObjectStore(await tempDir('packs-packed'), { packObjects: true });
    const a = await build(loose, source);
    const b = await build(packed, source);
    expect(b.root).toBe(a.root);
    expect(b.newObjects).toBe(a.newObjects);
    const packFiles = (await readdir(packed.packs.packsDir)).sort();
    expect(packFiles.filter((f) => f.endsWith('.idx')).length).toBeGreaterThan(10);
    expect(packFiles.filter((f) => f.endsWith('.pack')).length).toBe(packFiles.filter((f) => f.endsWith('.idx')).length);
    // Only the file too large for a pack is a file of its own.
    expect(await looseObjects(packed)).toBe(1);

    // A restore by a process that has not seen the packs (another store object on the same root).
    const reader = new ObjectStore(packed.root);
    const dest = path.join(await tempDir('packs-restore'), 'tree');
    await mkdir(dest, { mode: 0o700 });
    const handle = await DirHandle.open(dest);
    try {
      const extracted = await extractRevision(reader, b.root, handle, { systemPath: '/usr/bin:/bin', signal: AbortSignal.timeout(60_000), timeoutMs: 60_000 });
      expect(extracted.via).toBe('tar');
      expect(extracted.files).toBe(2_001);
    } finally {
      await handle.close();
      reader.closePacks();
    }
    expect(contentFacts(await describeTree(dest))).toEqual(contentFacts(await describeTree(source)));
  });

  it('a writer finds objects packed by another process: it writes no pack for them and refreshes the packs it reuses', async () => {
    const source = await sourceTree();
    const root = await tempDir('packs-shared');
    const first = new ObjectStore(root, { packObjects: true });
    const one = await build(first, source);
    const indexes = (await readdir(first.packs.packsDir)).filter((f) => f.endsWith('.idx'));
    const old = new Date(Date.now() - 3_600_000);
    for (const index of indexes) await utimes(path.join(first.packs.packsDir, index), old, old);
    const second = new ObjectStore(root, { packObjects: true });
    const two = await build(second, source);
    expect(two.root).toBe(one.root);
    expect(two.newObjects).toBe(0);
    expect((await readdir(second.packs.packsDir)).filter((f) => f.endsWith('.idx')).sort()).toEqual(indexes.sort());
    // Every pack the second persist reused is younger than the hour-old stamp (the GC's cutoff applies to it).
    const refreshed = await Promise.all(indexes.map(async (index) => (await stat(path.join(first.packs.packsDir, index))).mtimeMs > old.getTime() + 60_000));
    expect(refreshed.filter(Boolean).length).toBeGreaterThan(0);
  });

  it('every other reader takes packed objects: materialising (no tar), readObject, openObject read in order, and verify, which names a pack cut short', async () => {
    const source = await sourceTree();
    const packed = new ObjectStore(await tempDir('packs-readers'), { packObjects: true });
    const { root } = await build(packed, source);
    const reader = new ObjectStore(packed.root);

    const dest = path.join(await tempDir('packs-materialize'), 'tree');
    await mkdir(dest, { mode: 0o700 });
    const handle = await DirHandle.open(dest);
    try {
      await materializeRevision(reader, root, handle, { systemPath: '/usr/bin:/bin', signal: AbortSignal.timeout(60_000) });
    } finally {
      await handle.close();
    }
    expect(contentFacts(await describeTree(dest))).toEqual(contentFacts(await describeTree(source)));

    // A packed object, read whole and in order through a handle.
    const d7 = (await reader.readTree(root)).find((n) => n.name.toString() === 'd7') as DirNode;
    const { object: id } = (await reader.readTree(d7.tree)).find((n) => n.name.toString() === 'f42') as FileNode;
    expect(reader.packs.find(id) ?? reader.packs.findOrRefresh(id)).toBeDefined();
    const expected = readFileSync(path.join(source, 'd7', 'f42'));
    expect((await reader.readObject(id)).equals(expected)).toBe(true);
    const opened = await reader.openObject(id);
    const parts: Buffer[] = [];
    for (;;) {
      const chunk = Buffer.alloc(100);
      const { bytesRead } = await opened.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      parts.push(chunk.subarray(0, bytesRead));
    }
    await opened.close();
    expect(Buffer.concat(parts).equals(expected)).toBe(true);

    const verify = async () => {
      const checker = new StoreChecker(new ObjectStore(packed.root), { readData: () => true });
      return { findings: await checker.check(root), stats: checker.stats };
    };
    const clean = await verify();
    expect(clean.findings).toEqual([]);
    expect(clean.stats.objectsRead).toBe(clean.stats.objects);
    // A pack cut short: its last objects are corrupt, named with their paths; nothing else.
    const packFile = (await readdir(packed.packs.packsDir)).find((f) => f.endsWith('.pack'))!;
    const full = path.join(packed.packs.packsDir, packFile);
    await truncate(full, (await stat(full)).size - 10);
    const damaged = await verify();
    expect(damaged.findings.length).toBeGreaterThan(0);
    for (const finding of damaged.findings) expect(finding.problem).toBe('object-corrupt');
  });

  it('the objects GC takes a pack none of whose objects is reachable, older than the cutoff; a pack reused since is put back; a GC that died is undone', async () => {
    const root = await tempDir('packs-gc');
    const store = new ObjectStore(root, { packObjects: true });
    const kept = await build(store, await sourceTree());
    const other = await tempDir('packs-gc-other');
    for (let i = 0; i < 300; i++) writeFileSync(path.join(other, `g${i}`), `garbage ${i} `.repeat(1 + (i % 50)));
    const garbage = await build(store, other);
    const reachable = { trees: new IdSet(), objects: new IdSet(), revisions: 1, bytes: 0 };
    const mark = async (tree: string): Promise<void> => {
      reachable.trees.add(tree);
      for (const node of await store.readTree(tree)) {
        if (node.type === 'd') await mark(node.tree);
        else if (node.type === 'f') reachable.objects.add(node.object);
      }
    };
    await mark(kept.root);
    const indexes = (await readdir(store.packs.packsDir)).filter((f) => f.endsWith('.idx'));
    const old = new Date(Date.now() - 3_600_000);
    for (const index of indexes) await utimes(path.join(store.packs.packsDir, index), old, old);
    const options = { cutoffMs: Date.now() - 60_000, limit: 1_000, now: Date.now(), signal: AbortSignal.timeout(60_000), skip: () => undefined };
    const plan = await findUnreachable(store, reachable, options);
    const packs = plan.candidates.filter((c) => c.kind === 'pack');
    expect(packs.length).toBeGreaterThan(0);
    expect(plan.collectable.packs).toBe(packs.length);
    // Only packs of the garbage tree's objects: none holds an object the kept revision reaches.
    const garbageObjects = new Set<string>();
    for (const node of await store.readTree(garbage.root)) if (node.type === 'f') garbageObjects.add(node.object);
    const fresh = new ObjectStore(root);
    fresh.packs.refresh();
    for (const candidate of packs) {
      const index = PackIndex.decode(readFileSync(path.join(store.packs.packsDir, `${candidate.id}.idx`)), 'idx', candidate.id);
      for (const object of index.objects()) {
        expect(reachable.objects.has(object.id)).toBe(false);
        expect(garbageObjects.has(object.id)).toBe(true);
      }
    }
    // A writer reuses the first candidate after the look: it stays.
    expect(fresh.packs.reuse(packs[0]!.id)).toBe(true);
    expect(await removeUnreachable(store, packs[0]!)).toBe('reused');
    for (const candidate of packs.slice(1)) expect(await removeUnreachable(store, candidate)).toBe('removed');
    const left = await readdir(store.packs.packsDir);
    expect(left).toContain(`${packs[0]!.id}.idx`);
    for (const candidate of packs.slice(1)) expect(left.some((f) => f.startsWith(candidate.id))).toBe(false);
    expect(await readdir(store.tmpDir)).toEqual([]);

    // A GC that died after setting a reachable pack's index aside: the next run puts it back.
    const live = (await readdir(store.packs.packsDir)).find((f) => f.endsWith('.idx') && !packs.some((c) => f.startsWith(c.id)))!;
    const liveId = live.slice(0, 64);
    await rename(path.join(store.packs.packsDir, live), path.join(store.tmpDir, quarantineName('pack', liveId, '0badf00d')));
    expect(await recoverQuarantined(store, reachable)).toBe(1);
    expect(await readdir(store.packs.packsDir)).toContain(live);

    // A pack whose index never came (a writer killed between its renames) goes once old; a young one stays.
    const orphanOld = 'e'.repeat(64);
    const orphanYoung = 'f'.repeat(64);
    for (const id of [orphanOld, orphanYoung]) writeFileSync(path.join(store.packs.packsDir, `${id}.pack`), 'FLEETPK1 partial');
    await utimes(path.join(store.packs.packsDir, `${orphanOld}.pack`), old, old);
    const orphans = (await findUnreachable(store, reachable, { ...options, now: Date.now() })).candidates.filter((c) => c.orphan);
    expect(orphans.map((c) => c.id)).toEqual([orphanOld]);
    expect(await removeUnreachable(store, orphans[0]!)).toBe('removed');
    const after = await readdir(store.packs.packsDir);
    expect(after).not.toContain(`${orphanOld}.pack`);
    expect(after).toContain(`${orphanYoung}.pack`);

    // What the kept revision needs is all there: it restores exactly.
    const checker = new StoreChecker(new ObjectStore(root), { readData: () => true });
    expect(await checker.check(kept.root)).toEqual([]);
  });
  it('the objects GC repacks a pack most of whose bytes are unreachable: its reachable objects go into a new pack first; a reader that knew the old pack still reads them; one reused since, or damaged, stays', async () => {
    const root = await tempDir('packs-repack');
    const store = new ObjectStore(root, { packObjects: true });
    await build(store, await sourceTree());
    const indexes = (await readdir(store.packs.packsDir)).filter((f) => f.endsWith('.idx')).sort();
    expect(indexes.length).toBeGreaterThan(8);
    // Reachable: every object of the first pack, none of the second, every fourth of the others.
    const reachable = { trees: new IdSet(), objects: new IdSet(), revisions: 1, bytes: 0 };
    const reachableIds: string[] = [];
    const expectRepack = new Map<string, string[]>();
    const dead: string[] = [];
    indexes.forEach((name, n) => {
      const packId = name.slice(0, 64);
      const objects = [...PackIndex.decode(readFileSync(path.join(store.packs.packsDir, name)), name, packId).objects()];
      const live = objects.filter((_, j) => n === 0 || (n > 1 && j % 4 === 0));
      for (const object of live) {
        reachable.objects.add(object.id);
        reachableIds.push(object.id);
      }
      const total = objects.reduce((sum, o) => sum + o.length, 0);
      const liveBytes = live.reduce((sum, o) => sum + o.length, 0);
      if (live.length > 0 && live.length < objects.length && total - liveBytes >= total * REPACK_DEAD_SHARE) {
        expectRepack.set(packId, live.map((o) => o.id));
        dead.push(...objects.filter((o) => !live.includes(o)).map((o) => o.id));
      }
    });
    expect(expectRepack.size).toBeGreaterThan(4);
    const old = new Date(Date.now() - 3_600_000);
    for (const index of indexes) await utimes(path.join(store.packs.packsDir, index), old, old);
    // Other processes that listed the packs before the GC.
    const reader = new ObjectStore(root);
    reader.packs.refresh();
    const restorer = new ObjectStore(root);
    restorer.packs.refresh();

    const options = { cutoffMs: Date.now() - 60_000, limit: 1_000, now: Date.now(), signal: AbortSignal.timeout(60_000), skip: () => undefined };
    const plan = await findUnreachable(store, reachable, options);
    const repacks = plan.candidates.filter((c) => c.live);
    expect(new Map(repacks.map((c) => [c.id, c.live!.map((o) => o.id)]))).toEqual(expectRepack);
    expect(plan.collectable.repacks).toBe(expectRepack.size);
    expect(plan.candidates.filter((c) => c.kind === 'pack' && !c.live).map((c) => c.id)).toEqual([indexes[1]!.slice(0, 64)]);

    // One reused by a writer after the look stays (its live objects are in a new pack too); one with a changed byte in a live object is left alone.
    const [reusedPack, damagedPack, ...rest] = repacks;
    const writer = new ObjectStore(root);
    writer.packs.refresh();
    expect(writer.packs.reuse(reusedPack!.id)).toBe(true);
    const damagedFile = path.join(store.packs.packsDir, `${damagedPack!.id}.pack`);
    const damagedBytes = readFileSync(damagedFile);
    const hit = damagedPack!.live![0]!;
    damagedBytes[hit.offset] = damagedBytes[hit.offset]! ^ 0xff;
    writeFileSync(damagedFile + '.tmp', damagedBytes);
    await rename(damagedFile + '.tmp', damagedFile);
    expect(await repackPack(store, { ...reusedPack!, live: reusedPack!.live! })).toBe('reused');
    expect(await repackPack(store, { ...damagedPack!, live: damagedPack!.live! })).toBe('damaged');
    for (const candidate of rest) expect(await repackPack(store, { ...candidate, live: candidate.live! })).toBe('removed');

    const left = await readdir(store.packs.packsDir);
    expect(left).toContain(`${reusedPack!.id}.idx`);
    expect(left).toContain(`${damagedPack!.id}.idx`);
    for (const candidate of rest) expect(left.filter((f) => f.startsWith(candidate.id))).toEqual([]);
    expect(await readdir(store.tmpDir)).toEqual([]);

    // Every reachable object (but the damaged one) reads back exactly from a fresh listing, the repacked ones from their new packs;
    // the dead objects of the removed packs are gone.
    const after = new ObjectStore(root);
    after.packs.refresh();
    const removedIds = new Set(rest.map((c) => c.id));
    for (const id of reachableIds) {
      if (id === hit.id) continue;
      const found = after.packs.find(id)!;
      expect(found, id).toBeDefined();
      expect(removedIds.has(found.index.packId)).toBe(false);
      expect(sha256(await after.readObject(id))).toBe(id);
    }
    const inKept = new Set([...PackIndex.decode(readFileSync(path.join(store.packs.packsDir, `${reusedPack!.id}.idx`)), 'idx', reusedPack!.id).objects(), ...PackIndex.decode(readFileSync(path.join(store.packs.packsDir, `${damagedPack!.id}.idx`)), 'idx', damagedPack!.id).objects()].map((o) => o.id));
    for (const id of dead) if (!inKept.has(id)) expect(after.hasObjectSync(id), id).toBe(false);

    // The processes that knew the old packs still name a removed one for a moved object, and read it from its new pack (readObject, and a restore's readSmallInto).
    const probe = rest[0]!.live![0]!;
    expect(reader.packs.find(probe.id)?.index.packId).toBe(rest[0]!.id);
    expect(sha256(await reader.readObject(probe.id))).toBe(probe.id);
    expect(restorer.packs.find(probe.id)?.index.packId).toBe(rest[0]!.id);
    const target = Buffer.alloc(probe.length + 1);
    restorer.readSmallInto(probe.id, probe.length, target, 0, () => expect.unreachable('a packed object is read from its pack'));
    expect(sha256(target.subarray(0, probe.length))).toBe(probe.id);
    expect(restorer.packs.find(probe.id)?.index.packId).not.toBe(rest[0]!.id);
    // A second run finds nothing more to repack but the two left alone (the reused one is young now, the damaged one still damaged).
    const again = await findUnreachable(after, reachable, { ...options, now: Date.now() });
    expect(again.candidates.filter((c) => c.live).map((c) => c.id)).toEqual([damagedPack!.id]);
  });
});
