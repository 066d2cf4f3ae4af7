// The diff of two format 2 trees over an in-memory store (no Redis, no disk): added, changed,
// deleted, type changes, mode-only changes, whole subtrees, the limit, and the cost rule: a
// subtree with the same tree id on both sides is never read.
import { describe, expect, it } from 'vitest';
import { diffTrees, type TreeChange } from '../../src/archive/diff-trees.js';
import { encodeTree, sha256, type TreeNode } from '../../src/archive/tree-object.js';
import { memoryTrees as memoryStore, type TreeSpec as Spec } from '../helpers/memory-trees.js';

const show = (changes: readonly TreeChange[]) => changes.map((c) => `${c.kind} ${c.path.toString()} ${(c.after ?? c.before)!.type}`);

// A directory of `n` files (a big subtree that must not be read when unchanged).
const many = (n: number, tag = ''): Spec => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, `${tag}${i}`]));

describe('diffTrees', () => {
  it('lists added, changed and deleted entries in walk order; a type change is deleted + added; a mode-only change is changed', async () => {
    const m = memoryStore();
    const from = m.put({ 'a.txt': 'one', 'gone.txt': 'bye', 'mode.sh': 'echo', 'x': 'was a file', 'd': { 'keep.txt': 'k', 'edit.txt': 'e1' }, 'link': { link: 'a.txt' }, 'old': { 'deep': { 'f': '1' } } });
    const to = m.put({ 'a.txt': 'two', 'mode.sh': { mode: 0o755, content: 'echo' }, 'new.txt': 'hi', 'x': { 'inside.txt': 'now a dir' }, 'd': { 'keep.txt': 'k', 'edit.txt': 'e2' }, 'link': { link: 'new.txt' } });
    const diff = await diffTrees(m.store, from, to, { limit: 100 });
    expect(diff.truncated).toBe(false);
    expect(show(diff.changes)).toEqual([
      'changed a.txt f',
      'deleted gone.txt f',
      'changed link l',
      'changed mode.sh f',
      'added new.txt f',
      'deleted old d',
      'deleted x f',
      'added x d',
      'changed d/edit.txt f',
      'deleted old/deep d',
      'deleted old/deep/f f',
      'added x/inside.txt f',
    ]);
    const mode = diff.changes.find((c) => c.path.toString() === 'mode.sh')!;
    expect(mode.before).toMatchObject({ mode: 0o644 });
    expect(mode.after).toMatchObject({ mode: 0o755 });
  });

  it('skips a subtree whose tree id is the same on both sides without reading it: the cost follows the change', async () => {
    const m = memoryStore();
    const big = many(500);
    const from = m.put({ big, 'src': { 'main.py': 'v1', 'lib': many(50, 'lib') } });
    const to = m.put({ big, 'src': { 'main.py': 'v2', 'lib': many(50, 'lib') } });
    const bigId = m.put(big);
    const libId = m.put(many(50, 'lib'));
    m.reads.length = 0;
    const diff = await diffTrees(m.store, from, to, { limit: 100 });
    expect(show(diff.changes)).toEqual(['changed src/main.py f']);
    // The two roots and the two src trees; never big/ nor src/lib/.
    expect(diff.treesRead).toBe(4);
    expect(m.reads).not.toContain(bigId);
    expect(m.reads).not.toContain(libId);
  });

  it('the same root reads nothing; an unchanged mtime-only file is no change', async () => {
    const m = memoryStore();
    const root = m.put({ 'a': 'x', 'd': many(10) });
    m.reads.length = 0;
    expect(await diffTrees(m.store, root, root, { limit: 10 })).toEqual({ changes: [], truncated: false, treesRead: 0 });
    expect(m.reads).toEqual([]);
    // Same content and mode, another mtime: the trees differ, the diff is empty.
    const other = m.put({ 'a': { mode: 0o644, content: 'x' }, 'd': many(10) });
    expect(other).not.toBe(root);
    expect((await diffTrees(m.store, root, other, { limit: 10 })).changes).toEqual([]);
  });

  it('stops at the limit and says so; exactly the limit is not truncated', async () => {
    const m = memoryStore();
    const from = m.put({});
    const to = m.put({ 'd': many(20) });
    const cut = await diffTrees(m.store, from, to, { limit: 5 });
    expect(cut.truncated).toBe(true);
    expect(show(cut.changes)).toEqual(['added d d', 'added d/f0 f', 'added d/f1 f', 'added d/f10 f', 'added d/f11 f']);
    const exact = await diffTrees(m.store, from, to, { limit: 21 });
    expect(exact.truncated).toBe(false);
    expect(exact.changes).toHaveLength(21);
  });

  it('a directory mode change is listed, and its entries compared below it', async () => {
    const m = memoryStore();
    const inner = m.put({ 'f': '1' });
    const innerChanged = m.put({ 'f': '2' });
    const root = (mode: number, tree: string) => {
      const nodes: TreeNode[] = [{ type: 'd', name: Buffer.from('d'), mode, tree }];
      return { nodes, id: sha256(encodeTree(nodes)) };
    };
    const a = root(0o755, inner);
    const b = root(0o700, innerChanged);
    const store = {
      readTree: async (id: string) => (id === a.id ? a.nodes : id === b.id ? b.nodes : m.store.readTree(id)),
    };
    const diff = await diffTrees(store, a.id, b.id, { limit: 10 });
    expect(show(diff.changes)).toEqual(['changed d d', 'changed d/f f']);
  });
});
