// Bases in the archive (archive/base-roots.ts) against a real directory: a record round-trips
// durably, is listed, is a root of the objects GC's mark until it is removed; a bad snapshot id
// never becomes a path; a damaged record is an error (GC must not read past it), a missing one null.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArchiveStore } from '../../src/archive/archive-store.js';
import type { BaseRoot } from '../../src/archive/base-roots.js';
import type { TreeNode } from '../../src/archive/tree-object.js';
import { markReachable } from '../../src/gc/mark-reachable.js';
import { GcMarkIncompleteError } from '../../src/errors/gc-mark-incomplete-error.js';
import { tempDir } from '../helpers/fleet-env.js';

const signal = AbortSignal.timeout(10_000);

async function baseWithOneFile(archive: ArchiveStore, snapshotId: string): Promise<{ record: BaseRoot; object: string }> {
  const object = (await archive.objects.putBytes(Buffer.from('from the base'))).id;
  const node: TreeNode = { type: 'f', name: Buffer.from('f.txt'), mode: 0o644, size: 13, object, mtimeNs: 1n };
  const root = (await archive.objects.putTree([node])).id;
  const record: BaseRoot = { format: 1, snapshotId, root, scanStartedAt: '5', files: 1, bytes: 13, entries: 1, createdAt: new Date(0).toISOString() };
  await archive.bases.put(record);
  return { record, object };
}

describe('BaseRoots', () => {
  it('writes, reads, lists and removes a base record; the mark keeps what it reaches until it is removed', async () => {
    const archive = new ArchiveStore(await tempDir('base-roots'));
    expect(await archive.bases.list()).toEqual([]);
    expect(await archive.bases.read('snap-none')).toBeNull();
    const { record, object } = await baseWithOneFile(archive, 'snap-ws-g1-abcd');
    expect(await archive.bases.read('snap-ws-g1-abcd')).toEqual(record);
    // A temporary or a foreign name in the directory is not a base.
    await writeFile(path.join(archive.bases.dir, '.tmp-1234'), 'x');
    await writeFile(path.join(archive.bases.dir, 'notes.txt'), 'x');
    expect(await archive.bases.list()).toEqual(['snap-ws-g1-abcd']);

    const marked = await markReachable(archive, { declaredRoots: async () => [], signal });
    expect(marked.trees.has(record.root)).toBe(true);
    expect(marked.objects.has(object)).toBe(true);

    await archive.bases.remove('snap-ws-g1-abcd');
    expect(await archive.bases.list()).toEqual([]);
    const after = await markReachable(archive, { declaredRoots: async () => [], signal });
    expect(after.objects.has(object)).toBe(false);
  });

  it('refuses a snapshot id that is not one before it names a file', async () => {
    const archive = new ArchiveStore(await tempDir('base-roots-ids'));
    for (const bad of ['../escape', '.hidden', 'a/b', '']) {
      await expect(archive.bases.read(bad)).rejects.toThrow(/not a snapshot id/);
      await expect(archive.bases.remove(bad)).rejects.toThrow(/not a snapshot id/);
    }
    const { record } = await baseWithOneFile(archive, 'ok-1');
    await expect(archive.bases.put({ ...record, snapshotId: '../x' })).rejects.toThrow(/snapshotId/);
    await expect(archive.bases.put({ ...record, root: 'not-a-tree' })).rejects.toThrow(/root/);
  });

  it('a damaged record is an error for its readers and leaves the mark incomplete', async () => {
    const archive = new ArchiveStore(await tempDir('base-roots-damage'));
    await mkdir(archive.bases.dir, { recursive: true });
    await writeFile(path.join(archive.bases.dir, 'snap-bad.json'), '{"format":1,"snapshotId":"snap-other"}');
    await expect(archive.bases.read('snap-bad')).rejects.toThrow(/is not a base record/);
    await expect(markReachable(archive, { declaredRoots: async () => [], signal })).rejects.toBeInstanceOf(GcMarkIncompleteError);
  });
});
