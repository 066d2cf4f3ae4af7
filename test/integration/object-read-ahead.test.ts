// The read ahead of a restore through tar (object-read-ahead.ts) on a real store: it never starts
// while the restore's reads are fast, or slow without going to the disk; once a sample of them is
// slow and from the disk it reads the objects the
// restore will read next, in the restore's order (each inode once, large files and skipped names
// not at all), never more than AHEAD beyond the restore, and it stops when told. A warm restore
// looks at the process's block reads once.
import { link, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AHEAD, COLD_READ_MICROS, ObjectReadAhead, SAMPLE } from '../../src/archive/object-read-ahead.js';
import { ObjectStore } from '../../src/archive/object-store.js';
import type { FileNode, TreeNode } from '../../src/archive/tree-object.js';
import { storeTree } from '../helpers/store-tree.js';

const LARGE = 256 * 1024;
const reads = (node: TreeNode): node is FileNode => node.type === 'f' && node.size <= LARGE;
// The process's block reads as a cold restore makes them: many between two looks.
const diskReads = () => {
  let blocks = 0;
  return () => (blocks += 1_000);
};
let root: string;
let store: ObjectStore;
let tree: string;
// The objects a restore reads, in its order.
let order: string[];

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'fleet-read-ahead-'));
  const source = path.join(root, 'source');
  for (const dir of ['a', 'b/c', 'd']) {
    await mkdir(path.join(source, dir), { recursive: true });
    for (let i = 0; i < 200; i++) await writeFile(path.join(source, dir, `f${String(i).padStart(3, '0')}`), `${dir} ${i}\n`.repeat(1 + (i % 50)));
  }
  await link(path.join(source, 'a', 'f000'), path.join(source, 'd', 'same-inode'));
  await writeFile(path.join(source, 'b', 'large'), Buffer.alloc(LARGE + 1, 7));
  store = new ObjectStore(path.join(root, 'archive'));
  tree = await storeTree(store, source);
  order = [];
  const seen = new Set<string>();
  const visit = async (id: string): Promise<void> => {
    for (const node of await store.readTree(id)) {
      if (node.type === 'd') await visit(node.tree);
      else if (reads(node) && (node.linkKey === undefined || !seen.has(node.linkKey))) {
        if (node.linkKey !== undefined) seen.add(node.linkKey);
        order.push(node.object);
      }
    }
  };
  await visit(tree);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('ObjectReadAhead', () => {
  it('never reads ahead while the restore reads from the page cache, even when some reads met a pause', async () => {
    const ahead = new ObjectReadAhead(store, tree, { reads, signal: AbortSignal.timeout(60_000), blockReads: diskReads() });
    // One read in ten took 50 ms (a garbage collection in a large heap): the samples' medians stay fast.
    for (let i = 0; i < order.length; i++) ahead.read(i % 10 === 3 ? 50_000 : COLD_READ_MICROS / 10);
    await ahead.stop();
    expect(ahead.active).toBe(false);
    expect(ahead.readAhead).toBe(0);
  });

  it('never reads ahead when slow reads did not go to the disk (a loaded machine, not a cold cache)', async () => {
    const ahead = new ObjectReadAhead(store, tree, { reads, signal: AbortSignal.timeout(60_000), blockReads: () => 0 });
    for (let i = 0; i < order.length; i++) ahead.read(COLD_READ_MICROS * 5);
    await ahead.stop();
    expect(ahead.active).toBe(false);
    expect(ahead.readAhead).toBe(0);
  });

  it('once a sample of reads is slow, reads the objects the restore reads next, at most AHEAD beyond it', async () => {
    expect(order.length).toBe(600); // 600 small files; the second name of an inode and the large file are not read
    const got: string[] = [];
    const ahead = new ObjectReadAhead(store, tree, { reads, signal: AbortSignal.timeout(60_000), blockReads: diskReads(), onReadAhead: (object) => got.push(object) });
    for (let i = 0; i < SAMPLE; i++) ahead.read(COLD_READ_MICROS * 5);
    expect(ahead.active).toBe(true);
    await vi.waitFor(() => expect(ahead.readAhead).toBe(AHEAD), { timeout: 30_000, interval: 5 });
    // It waits for the restore: nothing past AHEAD objects beyond what it read.
    await new Promise((resolve) => setImmediate(resolve));
    expect(ahead.readAhead).toBe(AHEAD);
    expect(new Set(got)).toEqual(new Set(order.slice(SAMPLE, SAMPLE + AHEAD)));
    // The restore reads 100 more: the window moves by 100.
    for (let i = 0; i < 100; i++) ahead.read(COLD_READ_MICROS * 5);
    await vi.waitFor(() => expect(ahead.readAhead).toBe(AHEAD + 100), { timeout: 30_000, interval: 5 });
    expect(new Set(got)).toEqual(new Set(order.slice(SAMPLE, SAMPLE + 100 + AHEAD)));
    expect(got).toHaveLength(AHEAD + 100);
    // The restore caught up and read the rest itself: nothing behind it is read ahead.
    for (let i = SAMPLE + 100; i < order.length; i++) ahead.read(COLD_READ_MICROS * 5);
    await ahead.stop();
    expect(got.length).toBeLessThanOrEqual(AHEAD + 100 + 8);
    expect(new Set(got).size).toBe(got.length);
  });

  it('looks at the process\'s block reads once in a warm restore; a restore that turns slow starts reading ahead after two slow samples', async () => {
    let looks = 0;
    let blocks = 0;
    const counted = () => {
      looks += 1;
      return (blocks += 1_000);
    };
    const warm = new ObjectReadAhead(store, tree, { reads, signal: AbortSignal.timeout(60_000), blockReads: counted });
    for (let i = 0; i < order.length; i++) warm.read(COLD_READ_MICROS / 10);
    await warm.stop();
    expect(looks).toBe(1);
    expect(warm.active).toBe(false);

    looks = 0;
    const turning = new ObjectReadAhead(store, tree, { reads, signal: AbortSignal.timeout(60_000), blockReads: counted });
    for (let i = 0; i < 4 * SAMPLE; i++) turning.read(COLD_READ_MICROS / 10);
    expect(looks).toBe(1);
    // The first slow sample is not enough: its block reads were not looked at when it began.
    for (let i = 0; i < SAMPLE; i++) turning.read(COLD_READ_MICROS * 5);
    expect(turning.active).toBe(false);
    for (let i = 0; i < SAMPLE; i++) turning.read(COLD_READ_MICROS * 5);
    expect(turning.active).toBe(true);
    expect(looks).toBe(3);
    await turning.stop();
  });

  it('stops when told, with nothing left in flight', async () => {
    const ahead = new ObjectReadAhead(store, tree, { reads, signal: AbortSignal.timeout(60_000), blockReads: diskReads() });
    for (let i = 0; i < SAMPLE; i++) ahead.read(COLD_READ_MICROS * 5);
    await ahead.stop();
    const after = ahead.readAhead;
    expect(after).toBeLessThanOrEqual(AHEAD);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ahead.readAhead).toBe(after);
  });
});
