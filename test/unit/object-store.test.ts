// Format 2's pieces: canonical tree objects (encode, decode, ids, malformed input refused), the
// content-addressed store (dedup, verification, reuse refreshes GC age) and reading by path.
import { mkdtemp, open, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ObjectStore, prepareTree } from '../../src/archive/object-store.js';
import { flattenTree, lookupPath } from '../../src/archive/revision-reader.js';
import { encodeTree, sha256, TreeFormatError, type TreeNode } from '../../src/archive/tree-object.js';
import { decodeWholeTree } from '../../src/archive/tree-patch.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'fleet-store-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const OBJ = sha256(Buffer.from('x'));
const file = (name: string | Buffer, extra: Partial<{ mode: number; size: number; object: string; mtimeNs: bigint; linkKey: string }> = {}): TreeNode => ({
  type: 'f',
  name: Buffer.isBuffer(name) ? name : Buffer.from(name),
  mode: 0o644,
  size: 1,
  object: OBJ,
  mtimeNs: 1_700_000_000_123_456_789n,
  ...extra,
});

// A tree stored through the thread pool, and without it (small trees during a walk): the same files either way.
const TREE_PUTS = [
  ['putPreparedTree', (store: ObjectStore, nodes: TreeNode[], from?: string) => store.putPreparedTree(prepareTree(nodes), from)],
  ['putPreparedTreeSync', async (store: ObjectStore, nodes: TreeNode[], from?: string) => store.putPreparedTreeSync(prepareTree(nodes), from)],
] as const;

describe('tree objects', () => {
  it('encode canonically: sorted by name bytes, independent of input order; decode round-trips', () => {
    const bad = Buffer.from([0x62, 0xff]);
    const nodes: TreeNode[] = [
      file('b'),
      { type: 'd', name: Buffer.from('a'), mode: 0o755, tree: OBJ },
      { type: 'l', name: Buffer.from('link'), target: Buffer.from('../../etc') },
      { type: 'p', name: Buffer.from('fifo'), mode: 0o600, mtimeNs: 5n },
      file(bad, { linkKey: '42' }),
      file('new\nline'),
    ];
    const a = encodeTree(nodes);
    const b = encodeTree([...nodes].reverse());
    expect(a.equals(b)).toBe(true);
    const decoded = decodeWholeTree(a, sha256(a));
    expect(decoded.map((n) => n.name.toString('latin1'))).toEqual(['a', 'b', bad.toString('latin1'), 'fifo', 'link', 'new\nline']);
    expect(encodeTree(decoded).equals(a)).toBe(true);
    expect(decoded.find((n) => n.name.equals(bad))).toMatchObject({ type: 'f', linkKey: '42' });
  });

  it('times before 1970 round-trip (negative nanoseconds; a hostile tree can set them)', () => {
    const nodes: TreeNode[] = [file('old', { mtimeNs: -1_000_000_001n }), { type: 'p', name: Buffer.from('p'), mode: 0o600, mtimeNs: -5n }];
    const bytes = encodeTree(nodes);
    expect(decodeWholeTree(bytes, sha256(bytes))).toMatchObject([{ mtimeNs: -1_000_000_001n }, { mtimeNs: -5n }]);
  });

  it('refuses malformed trees: bad JSON, wrong version, bad names, unsorted, duplicates, wrong id', () => {
    const good = encodeTree([file('a')]);
    expect(() => decodeWholeTree(good, sha256(Buffer.from('other')))).toThrow(TreeFormatError);
    for (const text of ['{', '{"v":1,"e":[]}', '{"v":2,"e":[["..","f",420,1,"' + OBJ + '","1"]]}', '{"v":2,"e":[["a/b","d",493,"' + OBJ + '"]]}', '{"v":2,"e":[["b","d",493,"' + OBJ + '"],["a","d",493,"' + OBJ + '"]]}', '{"v":2,"e":[["a","f",99999,1,"' + OBJ + '","1"]]}', '{"v":2,"e":[["a","d",493,"nothex"]]}']) {
      expect(() => decodeWholeTree(Buffer.from(text), sha256(Buffer.from(text))), text).toThrow(TreeFormatError);
    }
    expect(() => encodeTree([file('a'), file('a')])).toThrow(TreeFormatError);
  });
});

describe('ObjectStore', () => {
  it('stores each content once, by its SHA-256, small and large, and reads it back', async () => {
    const store = new ObjectStore(root);
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    await writeFile(path.join(root, 'big'), big);
    const first = await store.putBytes(Buffer.from('hello'));
    const again = await store.putBytes(Buffer.from('hello'));
    expect(first).toMatchObject({ id: sha256(Buffer.from('hello')), bytes: 5, written: true });
    expect(again.written).toBe(false);
    const handle = await open(path.join(root, 'big'), 'r');
    const stored = await store.putObject(handle, big.length, false);
    await handle.close();
    expect(stored).toMatchObject({ id: sha256(big), bytes: big.length, written: true });
    expect((await readFile(store.objectPath(stored.id))).equals(big)).toBe(true);
    expect(await store.hasObject(stored.id)).toBe(true);
  });

  it('putObjectIfUnmoved: a source that moved while read is not placed, small or large, and leaves no temporary', async () => {
    const store = new ObjectStore(root);
    for (const size of [64 * 1024, 3 * 1024 * 1024]) {
      const from = path.join(root, `src-${size}`);
      const content = Buffer.alloc(size, 9);
      await writeFile(from, content);
      const handle = await open(from, 'r');
      try {
        expect(await store.putObjectIfUnmoved(handle, size, false, undefined, async () => false)).toBe('moved');
        expect(await store.hasObject(sha256(content))).toBe(false);
        expect(await readdir(store.tmpDir).catch(() => [])).toEqual([]);
        const stored = await store.putObjectIfUnmoved(handle, size, false, undefined, async () => true);
        expect(stored).toMatchObject({ id: sha256(content), bytes: size, written: true });
      } finally {
        await handle.close();
      }
    }
  });

  it('a reused object gets a fresh mtime (garbage collection then keeps it for its grace period)', async () => {
    const store = new ObjectStore(root);
    const { id } = await store.putBytes(Buffer.from('old'));
    await utimes(store.objectPath(id), 1_000, 1_000);
    await store.putBytes(Buffer.from('old'));
    expect((await stat(store.objectPath(id))).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
  });

  it.each(TREE_PUTS)('a reused tree gets a fresh mtime too, even one the store holds in memory; a collected one is written again (%s)', async (_, putTree) => {
    const store = new ObjectStore(root);
    const tree = await putTree(store, [file('a')]);
    await store.readTree(tree.id);
    await utimes(store.treePath(tree.id), 1_000, 1_000);
    expect((await putTree(store, [file('a')])).written).toBe(false);
    expect((await stat(store.treePath(tree.id))).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    // Collected by GC while this process still has it cached: the cache does not stand for the file.
    await rm(store.treePath(tree.id));
    expect(await putTree(store, [file('a')])).toEqual({ id: tree.id, written: true });
    expect((await readFile(store.treePath(tree.id))).equals(encodeTree([file('a')]))).toBe(true);
    // The tree a directory had in the basis (reachable from it) is named without any I/O.
    await rm(store.treePath(tree.id));
    expect(await putTree(store, [file('a')], tree.id)).toEqual({ id: tree.id, written: false });
    expect(await store.hasTree(tree.id)).toBe(false);
  });

  it('trees are stored and read back verified; lookups and flattening follow them', async () => {
    const store = new ObjectStore(root);
    const content = await store.putBytes(Buffer.from('deep'));
    const inner = await store.putTree([file('leaf.txt', { object: content.id, size: 4 })]);
    const top = await store.putTree([{ type: 'd', name: Buffer.from('dir'), mode: 0o750, tree: inner.id }, file('top.txt'), { type: 'l', name: Buffer.from('ln'), target: Buffer.from('dir/leaf.txt') }]);
    expect((await store.putTree([file('leaf.txt', { object: content.id, size: 4 })])).written).toBe(false);
    expect(await lookupPath(store, top.id, Buffer.from('dir/leaf.txt'))).toMatchObject({ type: 'f', object: content.id, size: 4 });
    expect(await lookupPath(store, top.id, Buffer.from('dir/missing'))).toBeNull();
    expect(await lookupPath(store, top.id, Buffer.from('top.txt/x'))).toBeNull();
    expect((await flattenTree(store, top.id)).map((e) => [e.p, e.t])).toEqual([
      ['dir', 'd'],
      ['ln', 'l'],
      ['top.txt', 'f'],
      ['dir/leaf.txt', 'f'],
    ]);
    // A damaged tree file is refused, never trusted.
    await writeFile(store.treePath(inner.id), '{"v":2,"e":[]}');
    await expect(new ObjectStore(root).readTree(inner.id)).rejects.toBeInstanceOf(TreeFormatError);
  });
});

describe.each(TREE_PUTS)('ObjectStore: trees stored as patches (%s)', (_, putTree) => {
  const dir = (count: number, changed: ReadonlyMap<string, number> = new Map()) =>
    Array.from({ length: count }, (_, i) => file(`f-${String(i).padStart(3, '0')}.txt`, { size: changed.get(`f-${String(i).padStart(3, '0')}.txt`) ?? 1 }));
  const isPatch = async (store: ObjectStore, id: string) => (await readFile(store.treePath(id))).subarray(0, 12).toString() === '{"v":2,"b":"';

  it('a directory that changed a little is a patch of the tree it replaced, read back exactly by a fresh store; patches stay one step from a whole tree', async () => {
    const store = new ObjectStore(root, { treePatches: true });
    const first = await putTree(store, dir(60));
    const second = await putTree(store, dir(60, new Map([['f-007.txt', 2]])), first.id);
    expect(second).toMatchObject({ written: true, patch: true });
    expect(await isPatch(store, second.id)).toBe(true);
    expect((await stat(store.treePath(second.id))).size * 10).toBeLessThan((await stat(store.treePath(first.id))).size);
    const fresh = new ObjectStore(root);
    expect(encodeTree(await fresh.readTree(second.id)).equals(encodeTree(dir(60, new Map([['f-007.txt', 2]]))))).toBe(true);
    expect((await fresh.loadTree(second.id)).base).toBe(first.id);
    // The next change builds on the same whole tree (never a patch of a patch), also from a store that has not read it.
    const third = await putTree(new ObjectStore(root, { treePatches: true }), dir(60, new Map([['f-007.txt', 2], ['f-020.txt', 3]])), second.id);
    expect((await fresh.loadTree(third.id)).base).toBe(first.id);
    // Half the directory changed: whole again, and the next patch builds on that.
    const most = new Map(Array.from({ length: 40 }, (_, i) => [`f-${String(i).padStart(3, '0')}.txt`, 4] as const));
    const fourth = await putTree(store, dir(60, most), third.id);
    expect(fourth.patch).toBeUndefined();
    expect((await fresh.loadTree(fourth.id)).base).toBeNull();
    const fifth = await putTree(store, dir(61, most), fourth.id);
    expect((await fresh.loadTree(fifth.id)).base).toBe(fourth.id);
    // Without the option (the default), every tree is whole.
    const plain = new ObjectStore(root);
    const whole = await putTree(plain, dir(60, new Map([['f-001.txt', 9]])), first.id);
    expect(await isPatch(plain, whole.id)).toBe(false);
  });

  it('a patch whose base is gone is refused on read, and written again whole when a writer reuses it; reusing a patch refreshes its base', async () => {
    const store = new ObjectStore(root, { treePatches: true });
    const base = await putTree(store, dir(40));
    const nodes = dir(40, new Map([['f-003.txt', 5]]));
    const patch = await putTree(store, nodes, base.id);
    expect(patch.patch).toBe(true);
    await utimes(store.treePath(base.id), 1_000, 1_000);
    await utimes(store.treePath(patch.id), 1_000, 1_000);
    expect((await putTree(store, nodes)).written).toBe(false);
    expect((await stat(store.treePath(base.id))).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    expect((await stat(store.treePath(patch.id))).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    await rm(store.treePath(base.id));
    await expect(new ObjectStore(root).readTree(patch.id)).rejects.toThrow(/is a patch of .*, which is missing/);
    await expect(new ObjectStore(root).loadTree(patch.id)).rejects.toBeInstanceOf(TreeFormatError);
    expect(await putTree(store, nodes)).toEqual({ id: patch.id, written: true });
    expect(await isPatch(store, patch.id)).toBe(false);
    expect(encodeTree(await new ObjectStore(root).readTree(patch.id)).equals(encodeTree(nodes))).toBe(true);
  });

  it('refuses a patch of a patch, a patch that does not give its id, and a base that does not match its id', async () => {
    const store = new ObjectStore(root, { treePatches: true });
    const base = await store.putTree(dir(40));
    const one = await store.putTree(dir(40, new Map([['f-001.txt', 5]])), base.id);
    const two = await store.putTree(dir(40, new Map([['f-001.txt', 5], ['f-002.txt', 5]])), one.id);
    // Rewrite `two` as a patch of `one` (itself a patch): refused.
    const onePatch = (await readFile(store.treePath(two.id))).toString().replace(base.id, one.id);
    await rm(store.treePath(two.id));
    await writeFile(store.treePath(two.id), onePatch.replace(/"r":\[\]/, '"r":[]'));
    await expect(new ObjectStore(root).readTree(two.id)).rejects.toThrow(/itself a patch/);
    // A patch whose result is another tree than its id says.
    await rm(store.treePath(two.id));
    await writeFile(store.treePath(two.id), (await readFile(store.treePath(one.id))).toString());
    await expect(new ObjectStore(root).readTree(two.id)).rejects.toThrow(/does not match its content/);
    // A damaged base.
    await rm(store.treePath(base.id));
    await writeFile(store.treePath(base.id), encodeTree(dir(39)));
    await expect(new ObjectStore(root).readTree(one.id)).rejects.toThrow(/the base of/);
  });
});
