// The objects GC's mark against a real archive in a temporary directory (no Redis): records of
// every workspace and of archives a reset moved aside are roots; a record committed while the
// mark runs, whose basis is removed before the mark reads it, is still reached; roots declared
// after the records were marked count; nothing below `.reset` is followed through a symlink.
import { mkdir, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArchiveStore } from '../../src/archive/archive-store.js';
import { resetAsidePath } from '../../src/archive/reset-aside.js';
import { newRevisionId } from '../../src/archive/revision-id.js';
import type { RevisionRecord } from '../../src/archive/revision-record.js';
import type { TreeNode } from '../../src/archive/tree-object.js';
import { markReachable } from '../../src/gc/mark-reachable.js';
import { tempDir } from '../helpers/fleet-env.js';

const signal = AbortSignal.timeout(10_000);
const noRoots = async () => [];

// A one-file tree; returns its tree id and the file's object id.
async function oneFile(archive: ArchiveStore, content: string): Promise<{ tree: string; object: string }> {
  const object = (await archive.objects.putBytes(Buffer.from(content))).id;
  const node: TreeNode = { type: 'f', name: Buffer.from('f.txt'), mode: 0o644, size: content.length, object, mtimeNs: 1n };
  return { tree: (await archive.objects.putTree([node])).id, object };
}

// Writes a format 2 record of `workspaceId` naming `root`.
async function record(archive: ArchiveStore, workspaceId: string, root: string, parent: string | null = null): Promise<string> {
  await archive.ensure(workspaceId);
  const revision = newRevisionId(1);
  const r: RevisionRecord = { format: 2, workspaceId, revision, generation: 1, reason: 'manual', turnId: null, parent, mode: 'reconcile', createdAt: new Date(0).toISOString(), scanStartedAt: '0', root, files: 1, bytes: 1, entries: 1 };
  await archive.writeRecord(r);
  return revision;
}

describe('markReachable', () => {
  it('marks the records of every workspace and of archives a reset moved aside, never through a symlink', async () => {
    const root = await tempDir('mark');
    const archive = new ArchiveStore(root);
    const live = await oneFile(archive, 'live');
    await record(archive, 'ws', live.tree);
    const aside = await oneFile(archive, 'reset aside');
    await record(archive, 'old', aside.tree);
    const moved = resetAsidePath(root, 'old', new Date());
    await mkdir(path.dirname(moved), { recursive: true });
    await rename(archive.paths('old').dir, moved);
    // A symlink planted in `.reset` that leads to another archive directory is not followed.
    const elsewhere = await tempDir('mark-elsewhere');
    const planted = new ArchiveStore(elsewhere);
    const hidden = await oneFile(archive, 'behind a symlink');
    await planted.ensure('x');
    await planted.writeRecord({ format: 2, workspaceId: 'x', revision: newRevisionId(1), generation: 1, reason: 'manual', turnId: null, parent: null, mode: 'reconcile', createdAt: new Date(0).toISOString(), scanStartedAt: '0', root: hidden.tree, files: 1, bytes: 1, entries: 1 });
    await symlink(planted.paths('x').dir, resetAsidePath(root, 'x', new Date(1_000)));

    const reachable = await markReachable(archive, { declaredRoots: noRoots, signal });
    expect(reachable.revisions).toBe(2);
    for (const id of [live.object, aside.object]) expect(reachable.objects.has(id)).toBe(true);
    for (const id of [live.tree, aside.tree]) expect(reachable.trees.has(id)).toBe(true);
    expect(reachable.objects.has(hidden.object)).toBe(false);
  });

  it('a record committed during the mark is reached even when the basis it shares is removed before the mark reads it', async () => {
    const archive = new ArchiveStore(await tempDir('mark'));
    const basis = await oneFile(archive, 'shared with the next revision');
    const r0 = await record(archive, 'ws', basis.tree);
    const next = await oneFile(archive, 'written by the next revision');
    const readRecord = archive.readRecord.bind(archive);
    let committed: string | null = null;
    // Between the listing and the read of r0: a persist commits r1 on top of it, then retention removes r0.
    archive.readRecord = async (workspaceId, revision) => {
      if (revision === r0 && !committed) {
        const shared: TreeNode = { type: 'd', name: Buffer.from('kept'), mode: 0o755, tree: basis.tree };
        const rootTree = (await archive.objects.putTree([shared, { type: 'f', name: Buffer.from('n.txt'), mode: 0o644, size: 1, object: next.object, mtimeNs: 1n }])).id;
        committed = await record(archive, 'ws', rootTree, r0);
        await rm(archive.paths('ws').record(r0));
      }
      return readRecord(workspaceId, revision);
    };
    const reachable = await markReachable(archive, { declaredRoots: noRoots, signal });
    expect(committed).not.toBeNull();
    expect(reachable.revisions).toBe(1);
    expect(reachable.objects.has(basis.object)).toBe(true);
    expect(reachable.objects.has(next.object)).toBe(true);
    expect(reachable.trees.has(basis.tree)).toBe(true);
  });

  it('roots are asked for once the records are marked; a missing declared root is skipped', async () => {
    const archive = new ArchiveStore(await tempDir('mark'));
    await record(archive, 'ws', (await oneFile(archive, 'a')).tree);
    const source = await oneFile(archive, 'a rollback source removed meanwhile');
    const asked: number[] = [];
    const reachable = await markReachable(archive, {
      declaredRoots: async () => {
        asked.push(1);
        return [source.tree, 'f'.repeat(64)];
      },
      signal,
    });
    expect(asked).toHaveLength(1);
    expect(reachable.trees.has(source.tree)).toBe(true);
    expect(reachable.objects.has(source.object)).toBe(true);
    expect(reachable.trees.has('f'.repeat(64))).toBe(false);
  });

  it("keeps the base of a patched tree, but not what only the base's entries name; a base also reached as a directory is walked", async () => {
    const root = await tempDir('mark-patch');
    const archive = new ArchiveStore(root, { treePatches: true });
    const put = async (name: string, content: string): Promise<TreeNode> => ({ type: 'f', name: Buffer.from(name), mode: 0o644, size: content.length, object: (await archive.objects.putBytes(Buffer.from(content))).id, mtimeNs: 1n });
    const kept = await Promise.all(Array.from({ length: 30 }, (_, i) => put(`k-${String(i).padStart(2, '0')}`, `kept ${i}`)));
    const dropped = await put('z-dropped', 'only the base names this');
    const base = (await archive.objects.putTree([...kept, dropped])).id;
    const patched = await archive.objects.putTree(kept, base);
    expect(patched.patch).toBe(true);
    await record(archive, 'ws', patched.id);
    const first = await markReachable(archive, { declaredRoots: noRoots, signal });
    expect(first.trees.has(patched.id)).toBe(true);
    expect(first.trees.has(base)).toBe(true);
    expect(first.objects.has(kept[0]!.type === 'f' ? kept[0]!.object : '')).toBe(true);
    expect(first.objects.has(dropped.type === 'f' ? dropped.object : '')).toBe(false);
    // The base is also a directory of another revision: its entries are reachable through it.
    const parent = (await archive.objects.putTree([{ type: 'd', name: Buffer.from('old'), mode: 0o755, tree: base }])).id;
    await record(archive, 'zz-after', parent);
    const second = await markReachable(archive, { declaredRoots: noRoots, signal });
    expect(second.objects.has(dropped.type === 'f' ? dropped.object : '')).toBe(true);
  });
});
