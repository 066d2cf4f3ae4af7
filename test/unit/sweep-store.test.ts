// The objects GC's sweep against a real store in a temporary directory (no Redis): what the mark
// reaches stays, unreachable entries go only past the cutoff, a reuse between the look and the
// removal keeps the entry (the quarantine rename), odd names are reported and never removed, and
// a GC that died mid-removal has what the mark reaches put back.
import { lstat, mkdir, readdir, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { quarantineName } from '../../src/archive/archive-paths.js';
import { ObjectStore } from '../../src/archive/object-store.js';
import { sha256 } from '../../src/archive/tree-object.js';
import { IdSet } from '../../src/gc/id-set.js';
import type { Reachable } from '../../src/gc/mark-reachable.js';
import { findUnreachable, recoverQuarantined, removeUnreachable } from '../../src/gc/sweep-store.js';
import type { InvalidId } from '../../src/providers/id-rules.js';
import { tempDir } from '../helpers/fleet-env.js';

const LONG_AGO = 1_700_000_000;

function reachableOf(objects: string[], trees: string[]): Reachable {
  const r = { trees: new IdSet(), objects: new IdSet(), revisions: 1, bytes: 0 };
  for (const id of objects) r.objects.add(id);
  for (const id of trees) r.trees.add(id);
  return r;
}

async function storeWith(): Promise<{ store: ObjectStore; kept: string; old: string; young: string; tree: string }> {
  const store = new ObjectStore(await tempDir('sweep'));
  const kept = (await store.putBytes(Buffer.from('kept'))).id;
  const old = (await store.putBytes(Buffer.from('old garbage'))).id;
  const young = (await store.putBytes(Buffer.from('young garbage'))).id;
  const tree = (await store.putTree([{ type: 'f', name: Buffer.from('f'), mode: 0o644, size: 11, object: old, mtimeNs: 1n }])).id;
  for (const file of [store.objectPath(kept), store.objectPath(old), store.treePath(tree)]) await utimes(file, LONG_AGO, LONG_AGO);
  return { store, kept, old, young, tree };
}

const options = (skip: (i: InvalidId) => void = () => undefined, limit = 100) => ({ cutoffMs: Date.now() - 3_600_000, limit, now: Date.now(), signal: AbortSignal.timeout(10_000), skip });

describe('sweep of the object store', () => {
  it('lists unreachable entries past the cutoff (trees first), counts young ones, and removes them', async () => {
    const { store, kept, old, young, tree } = await storeWith();
    const plan = await findUnreachable(store, reachableOf([kept], []), options());
    expect(plan.candidates.map((c) => [c.kind, c.id])).toEqual([
      ['tree', tree],
      ['object', old],
    ]);
    expect(plan.collectable).toMatchObject({ objects: 1, trees: 1 });
    expect(plan.young).toEqual({ objects: 1, trees: 0, packs: 0, repacks: 0, bytes: 'young garbage'.length });
    expect((await findUnreachable(store, reachableOf([kept], []), options(undefined, 1))).candidates).toHaveLength(1);
    for (const c of plan.candidates) expect(await removeUnreachable(store, c)).toBe('removed');
    expect(await store.hasObject(old)).toBe(false);
    expect(await store.hasTree(tree)).toBe(false);
    expect(await store.hasObject(kept)).toBe(true);
    expect(await store.hasObject(young)).toBe(true);
    expect(await readdir(store.tmpDir)).toEqual([]);
    expect(await removeUnreachable(store, plan.candidates[1]!)).toBe('gone');
  });

  it('an entry a writer reuses after it was listed is put back, not removed (dedup versus prune)', async () => {
    const { store, kept, old } = await storeWith();
    const [candidate] = (await findUnreachable(store, reachableOf([kept], []), options())).candidates.filter((c) => c.id === old);
    // A persist stores the same content between the GC's look and its removal: the store refreshes the file.
    expect((await store.putBytes(Buffer.from('old garbage'))).written).toBe(false);
    expect(await removeUnreachable(store, candidate!)).toBe('reused');
    expect(await store.hasObject(old)).toBe(true);
    expect((await stat(store.objectPath(old))).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    expect(await readdir(store.tmpDir)).toEqual([]);
  });

  it('names that are not ids of their fan-out directory, and non-files, are reported and left alone', async () => {
    const { store, kept } = await storeWith();
    const odd = [path.join(store.kindDir('object'), kept.slice(0, 2), 'not-an-id'), path.join(store.kindDir('object'), kept.slice(0, 2), sha256(Buffer.from('elsewhere')).replace(/^../, 'zz'))];
    for (const file of odd) await writeFile(file, 'x');
    await mkdir(path.join(store.kindDir('object'), 'zz'));
    const misplaced = sha256(Buffer.from('dir'));
    await mkdir(path.join(store.kindDir('tree'), misplaced.slice(0, 2), misplaced), { recursive: true });
    for (const p of [...odd, path.join(store.kindDir('tree'), misplaced.slice(0, 2), misplaced)]) await utimes(p, LONG_AGO, LONG_AGO);
    const skipped: InvalidId[] = [];
    const plan = await findUnreachable(store, reachableOf([kept], []), options((i) => skipped.push(i)));
    expect(plan.candidates.every((c) => c.kind !== 'pack' && !odd.includes(store.pathOf(c.kind, c.id)))).toBe(true);
    expect(skipped.map((s) => [s.field, path.basename(s.value)]).sort()).toEqual(
      [['objectId', 'not-an-id'], ['objectId', path.basename(odd[1]!)], ['path', 'zz'], ['objectId', misplaced]].sort(),
    );
  });

  it('a fan-out directory that is a symlink is reported and never followed, neither listed nor removed through', async () => {
    const { store, kept, old } = await storeWith();
    // Outside the store: a directory holding a file named like an unreachable id, old enough to go.
    const outside = await tempDir('sweep-outside');
    const victim = sha256(Buffer.from('outside the store'));
    await writeFile(path.join(outside, victim), 'outside the store');
    await utimes(path.join(outside, victim), LONG_AGO, LONG_AGO);
    const link = path.join(store.kindDir('object'), victim.slice(0, 2));
    await rm(link, { recursive: true, force: true });
    await symlink(outside, link);
    const skipped: InvalidId[] = [];
    const plan = await findUnreachable(store, reachableOf([kept], []), options((i) => skipped.push(i)));
    expect(plan.candidates.map((c) => c.id)).not.toContain(victim);
    expect(skipped).toContainEqual(expect.objectContaining({ field: 'path', value: link }));
    // A candidate whose fan-out directory was swapped for a symlink since it was listed is left alone.
    const [candidate] = plan.candidates.filter((c) => c.id === old);
    const fanout = path.join(store.kindDir('object'), old.slice(0, 2));
    const moved = `${fanout}-moved`;
    await rename(fanout, moved);
    await symlink(moved, fanout);
    expect(await removeUnreachable(store, candidate!)).toBe('gone');
    expect((await lstat(path.join(moved, old))).isFile()).toBe(true);
    expect((await stat(path.join(outside, victim))).isFile()).toBe(true);
  });

  it('what a GC that died between its rename and its check left aside comes back when the mark reaches it', async () => {
    const { store, kept, old } = await storeWith();
    await mkdir(store.tmpDir, { recursive: true });
    for (const id of [kept, old]) await rename(store.objectPath(id), path.join(store.tmpDir, quarantineName('object', id, '0a0b0c0d')));
    expect(await recoverQuarantined(store, reachableOf([kept], []))).toBe(1);
    expect(await store.hasObject(kept)).toBe(true);
    expect(await store.hasObject(old)).toBe(false);
    expect(await readdir(store.tmpDir)).toEqual([quarantineName('object', old, '0a0b0c0d')]);
  });
});
