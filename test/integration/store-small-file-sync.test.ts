// storeSmallFileSync on real files of a hostile tree: a small file is stored whole and named by
// its hash; a symlink is never followed (the open fails, nothing stored); a FIFO is not read;
// a file past the limit, or sparse, or (when asked) with two names, is left to the streaming path; a file that vanished fails
// its open as it would for the streaming path.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { link, readdir, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ObjectStore } from '../../src/archive/object-store.js';
import { storeSmallFileSync } from '../../src/archive/store-small-file-sync.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/fleet-env.js';

async function setup() {
  const tree = await tempDir('small-src');
  const store = new ObjectStore(await tempDir('small-store'));
  const dir = await DirHandle.open(tree);
  addCleanup(() => dir.close());
  const objects = async () => (await readdir(store.kindDir('object'), { recursive: true }).catch(() => [] as string[])).filter((f) => f.length > 3);
  return { tree, store, dir, objects };
}

describe('storeSmallFileSync', () => {
  it('stores a small file whole under its hash, once however often it is stored', async () => {
    const { tree, store, dir, objects } = await setup();
    const bytes = Buffer.from('hello, small file\n');
    await writeFile(path.join(tree, 'a.txt'), bytes);
    await writeFile(path.join(tree, 'b.txt'), bytes);
    const first = storeSmallFileSync(dir, Buffer.from('a.txt'), { store, maxBytes: 65536, label: 'a.txt' });
    const id = createHash('sha256').update(bytes).digest('hex');
    expect(first).toMatchObject({ kind: 'stored', stored: { id, bytes: bytes.length, written: true } });
    const second = storeSmallFileSync(dir, Buffer.from('b.txt'), { store, maxBytes: 65536, label: 'b.txt' });
    expect(second).toMatchObject({ kind: 'stored', stored: { id, written: false } });
    expect((await store.readObject(id)).equals(bytes)).toBe(true);
    expect(await objects()).toHaveLength(1);
  });

  it('files of every size in a row, larger then smaller then empty, are each stored as their own bytes (the read buffers are reused)', async () => {
    const { tree, store, dir } = await setup();
    const sizes = [60_000, 17, 65_536, 0, 4_097, 1, 30_000];
    for (const [i, size] of sizes.entries()) {
      const bytes = Buffer.alloc(size, 0x61 + i);
      await writeFile(path.join(tree, `f${i}`), bytes);
      const outcome = storeSmallFileSync(dir, Buffer.from(`f${i}`), { store, maxBytes: 65536, label: `f${i}` });
      const id = createHash('sha256').update(bytes).digest('hex');
      expect(outcome, `f${i} (${size} bytes)`).toMatchObject({ kind: 'stored', stored: { id, bytes: size } });
      expect((await store.readObject(id)).equals(bytes), `f${i} (${size} bytes)`).toBe(true);
    }
  });

  it('never follows a symlink, never reads a FIFO, and leaves large or sparse files to the streaming path', async () => {
    const { tree, store, dir, objects } = await setup();
    const outside = await tempDir('small-outside');
    await writeFile(path.join(outside, 'secret'), 'host secret');
    await symlink(path.join(outside, 'secret'), path.join(tree, 'link'));
    execFileSync('mkfifo', [path.join(tree, 'fifo')]);
    await writeFile(path.join(tree, 'big'), Buffer.alloc(70_000, 1));
    await writeFile(path.join(tree, 'holes'), '');
    await truncate(path.join(tree, 'holes'), 60_000);
    const options = { store, maxBytes: 65536, label: 'x' };
    expect(() => storeSmallFileSync(dir, Buffer.from('link'), options)).toThrow(expect.objectContaining({ code: 'ELOOP' }));
    expect(storeSmallFileSync(dir, Buffer.from('fifo'), options)).toEqual({ kind: 'vanished' });
    // `large` carries the open file's stat: a caller that did not lstat the entry learns what it is from it.
    expect(storeSmallFileSync(dir, Buffer.from('big'), options)).toEqual({ kind: 'large', stats: expect.objectContaining({ size: 70_000n }) });
    expect(storeSmallFileSync(dir, Buffer.from('holes'), options)).toEqual({ kind: 'large', stats: expect.objectContaining({ size: 60_000n }) });
    // A file with two names goes the streaming way when asked (its inode is read once for both), else it is stored here.
    await writeFile(path.join(tree, 'linked'), 'two names');
    await link(path.join(tree, 'linked'), path.join(tree, 'linked-too'));
    const linked = storeSmallFileSync(dir, Buffer.from('linked'), { ...options, singleName: true });
    expect(linked).toEqual({ kind: 'large', stats: expect.objectContaining({ nlink: 2n, size: 9n }) });

    expect(() => storeSmallFileSync(dir, Buffer.from('gone'), options)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect(() => storeSmallFileSync(dir, Buffer.from('../escape'), options)).toThrow(TypeError);
    expect(await objects()).toEqual([]);
    expect(storeSmallFileSync(dir, Buffer.from('linked'), options)).toMatchObject({ kind: 'stored', stored: { bytes: 9 } });
  });
});
