// Revisions built from a listing (archive/listing-builder.ts): what the plan takes from the basis
// (the index only where the basis agrees; the seed check only for objects the store holds), and
// what the build makes of deletions, type changes, unstable and refused files, unreadable
// directories, upload-only and cut-short listings. A real object store in a temporary directory.
import { rm } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BasisLookup, buildFromListing, planListing, type FetchedFile, type ListedIndex, type ListedIndexRow } from '../../src/archive/listing-builder.js';
import { ObjectStore } from '../../src/archive/object-store.js';
import type { TreeNode } from '../../src/archive/tree-object.js';
import type { ListedEntry, ListedType, Listing } from '../../src/tree/listing.js';
import { storedMtimeNs } from '../../src/tree/file-times.js';
import { tempDir } from '../helpers/fleet-env.js';

let root: string;
let store: ObjectStore;
beforeEach(async () => {
  root = await tempDir('listing-builder');
  store = new ObjectStore(root);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const T = 1_700_000_000_123_456_789n;
let nextIno = 1000n;

// One listed entry; files carry their content (stored or not is the test's choice).
function entry(rel: string, type: ListedType, extra: Partial<ListedEntry> = {}): ListedEntry {
  const bytes = Buffer.from(rel, 'latin1');
  return { rel: bytes, key: rel, type, size: 0, mode: type === 'dir' ? 0o755 : 0o644, mtimeNs: T, ctimeNs: T, ino: nextIno++, dev: 1n, ...extra };
}

const listing = (entries: ListedEntry[], truncated = false): Listing => ({ entries: new Map(entries.map((e) => [e.key, e])), skipped: { special: 0, overLimit: 0, inconsistent: 0 }, truncated });
const signal = new AbortController().signal;

// Plans and builds `listed` against `basisRoot`; every file asked for is "fetched" with `contents` (absent: unstable).
async function build(listed: Listing, basisRoot: string | null, options: { index?: ListedIndex | null; contents?: Record<string, string>; keepMissing?: boolean; maxFileBytes?: number } = {}) {
  const basis = new BasisLookup(store, basisRoot);
  const index = options.index ?? null;
  const plan = await planListing({ basis, listing: listed, index, maxFileBytes: options.maxFileBytes ?? 1 << 20, hasObject: (id) => store.hasObjectSync(id), signal });
  const fetched = new Map<string, FetchedFile>();
  for (const [key] of plan.fetch) {
    const content = options.contents?.[key];
    if (content !== undefined) fetched.set(key, { object: (await store.putBytes(Buffer.from(content))).id, indexable: true });
  }
  const built = await buildFromListing({ store, basis, basisRoot, listing: listed, plan, fetched, seedIndexable: () => true, index, keepMissing: options.keepMissing ?? false, signal });
  return { plan, built };
}

// Every node of a revision with its path.
async function nodesOf(tree: string, prefix = ''): Promise<{ path: string; node: TreeNode }[]> {
  const out: { path: string; node: TreeNode }[] = [];
  for (const node of await store.readTree(tree)) {
    const path = prefix + node.name.toString('latin1');
    out.push({ path, node });
    if (node.type === 'd') out.push(...(await nodesOf(node.tree, `${path}/`)));
  }
  return out;
}

// Path → type and content (files), target (links) of a revision.
async function facts(rootTree: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const { path, node } of await nodesOf(rootTree)) {
    if (node.type === 'f') out[path] = `f ${node.mode.toString(8)} ${(await store.readObject(node.object)).toString()}`;
    else if (node.type === 'd') out[path] = `d ${node.mode.toString(8)}`;
    else if (node.type === 'l') out[path] = `l ${node.target.toString()}`;
    else out[path] = `p ${node.mode.toString(8)}`;
  }
  return out;
}

describe('listing builder', () => {
  it('builds the listed tree; an unchanged directory keeps its tree id; the index is believed only where the basis agrees', async () => {
    const a = entry('src/a.txt', 'file', { size: 1 });
    const b = entry('src/b.txt', 'file', { size: 1 });
    const c = entry('docs/c.txt', 'file', { size: 1, mode: 0o600 });
    const first = listing([entry('src', 'dir'), a, b, entry('docs', 'dir', { mode: 0o750 }), c, entry('link', 'symlink', { target: Buffer.from('src/a.txt') }), entry('pipe', 'fifo', { mode: 0o600 })]);
    const one = await build(first, null, { contents: { 'src/a.txt': 'a', 'src/b.txt': 'b', 'docs/c.txt': 'c' } });
    expect(one.plan.fetch.size).toBe(3);
    expect(await facts(one.built.root)).toEqual({ src: 'd 755', 'src/a.txt': 'f 644 a', 'src/b.txt': 'f 644 b', docs: 'd 750', 'docs/c.txt': 'f 600 c', link: 'l src/a.txt', pipe: 'p 600' });
    expect(one.built).toMatchObject({ files: 3, bytes: 3, entries: 7, changedFiles: 3 });
    expect(one.built.index.size).toBe(3);

    // Same listing, with the index: nothing fetched, every tree the basis's.
    const two = await build(first, one.built.root, { index: one.built.index });
    expect(two.plan.fetch.size).toBe(0);
    expect(two.built.root).toBe(one.built.root);
    expect(two.built).toMatchObject({ newTrees: 0, changedFiles: 0, indexChanged: false });

    // b rewritten (new ctime); the index row of a names another object than the basis has: both fetched.
    const b2 = { ...b, ctimeNs: T + 5n };
    const forged = new Map<string, ListedIndexRow>(one.built.index);
    forged.set('src/a.txt', { ...forged.get('src/a.txt')!, object: forged.get('src/b.txt')!.object });
    const three = await build(listing([entry('src', 'dir'), a, b2, entry('docs', 'dir', { mode: 0o750 }), c, entry('link', 'symlink', { target: Buffer.from('src/a.txt') }), entry('pipe', 'fifo', { mode: 0o600 })]), one.built.root, {
      index: forged,
      contents: { 'src/a.txt': 'a', 'src/b.txt': 'B' },
    });
    expect([...three.plan.fetch.keys()].sort()).toEqual(['src/a.txt', 'src/b.txt']);
    expect((await facts(three.built.root))['src/b.txt']).toBe('f 644 B');
    // Only src changed: the root and src are new trees, docs is the basis's.
    expect(three.built).toMatchObject({ newTrees: 2, changedFiles: 1, reusedDirs: 1 });
  });

  it('deletions, type changes, unstable and over-limit files, unreadable directories, upload-only and cut-short listings', async () => {
    const base = listing([entry('d', 'dir'), entry('d/keep', 'file', { size: 4 }), entry('d/gone', 'file', { size: 4 }), entry('x', 'file', { size: 1 }), entry('closed', 'dir'), entry('closed/in', 'file', { size: 2 }), entry('big', 'file', { size: 3 })]);
    const one = await build(base, null, { contents: { 'd/keep': 'keep', 'd/gone': 'gone', x: 'x', 'closed/in': 'in', big: 'big' } });
    const basisRoot = one.built.root;
    const index = one.built.index;
    const keep = base.entries.get('d/keep')!;
    const now = (entries: ListedEntry[], truncated = false) => listing([entry('d', 'dir'), keep, ...entries], truncated);

    // d/gone deleted, x now a directory, closed unreadable, big grown over the limit and changed: refused.
    const typeChanged = [entry('x', 'dir'), entry('x/y', 'file', { size: 1 }), entry('closed', 'closed-dir', { mode: 0 }), entry('big', 'file', { size: 30 })];
    const two = await build(now(typeChanged), basisRoot, { index, contents: { 'x/y': 'y' }, maxFileBytes: 10 });
    expect(two.plan.refused.has('big')).toBe(true);
    expect(await facts(two.built.root)).toEqual({ d: 'd 755', 'd/keep': 'f 644 keep', x: 'd 755', 'x/y': 'f 644 y', closed: 'd 755', 'closed/in': 'f 644 in', big: 'f 644 big' });

    // A file asked for and not given (it changed before the second look) keeps its basis version, or is left out when new.
    const unstable = await build(now([entry('x', 'file', { size: 1, ctimeNs: T + 9n }), entry('new', 'file', { size: 1 })]), basisRoot, { index, contents: {} });
    expect(unstable.built.unstableFiles).toBe(2);
    expect(await facts(unstable.built.root)).toEqual({ d: 'd 755', 'd/keep': 'f 644 keep', x: 'f 644 x' });

    // Upload-only keeps what the listing lacks; so does a listing cut short by the entry limit.
    const upload = await build(now([]), basisRoot, { index, keepMissing: true });
    expect(Object.keys(await facts(upload.built.root)).sort()).toEqual(['big', 'closed', 'closed/in', 'd', 'd/gone', 'd/keep', 'x']);
    expect(upload.built.root).toBe(basisRoot);
    const cut = await build(now([], true), basisRoot, { index });
    expect(cut.built.root).toBe(basisRoot);
    const reconcile = await build(now([]), basisRoot, { index });
    expect(Object.keys(await facts(reconcile.built.root)).sort()).toEqual(['d', 'd/keep']);
  });

  it('without an index the basis is the guide: same size, mode and mtime and the object present, else fetched', async () => {
    const base = listing([entry('a', 'file', { size: 1 }), entry('b', 'file', { size: 1 }), entry('c', 'file', { size: 1 })]);
    const one = await build(base, null, { contents: { a: 'a', b: 'b', c: 'c' } });
    const tree = await facts(one.built.root);
    expect(tree).toEqual({ a: 'f 644 a', b: 'f 644 b', c: 'f 644 c' });
    // A restored incarnation: new inodes and ctimes, the revision's times (as Node stored them); b's mtime moved; c's object lost.
    const restored = (e: ListedEntry, extra: Partial<ListedEntry> = {}) => ({ ...e, ino: e.ino + 50_000n, ctimeNs: T + 99n, mtimeNs: storedMtimeNs(e.mtimeNs), ...extra });
    const nodes = await nodesOf(one.built.root);
    const lost = nodes.find((n) => n.path === 'c')!.node;
    if (lost.type !== 'f') throw new Error('c is not a file');
    await rm(store.objectPath(lost.object));
    const after = await build(listing([restored(base.entries.get('a')!), restored(base.entries.get('b')!, { mtimeNs: T + 1_000_000_000n }), restored(base.entries.get('c')!)]), one.built.root, { contents: { b: 'B', c: 'c' } });
    expect([...after.plan.kept.keys()]).toEqual(['a']);
    expect(after.plan.kept.get('a')!.seeded).toBe(true);
    expect([...after.plan.fetch.keys()].sort()).toEqual(['b', 'c']);
    expect(store.hasObjectSync(lost.object)).toBe(true);
    expect(await facts(after.built.root)).toEqual({ a: 'f 644 a', b: 'f 644 B', c: 'f 644 c' });
  });
});
