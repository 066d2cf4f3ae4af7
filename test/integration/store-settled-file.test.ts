// storeSettledFile on real files of a hostile tree: a file over a second old is stored whole under
// its hash (larger then smaller, the read buffer reused), with the write barrier where the
// filesystem has one; a symlink is never followed (the open fails as it is); a directory or FIFO
// at the name is vanished, not read; a young, sparse or too-large file is left to the streaming
// path (`careful`), nothing stored.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ObjectStore } from '../../src/archive/object-store.js';
import { storeSettledFile } from '../../src/archive/store-settled-file.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { keepsWriteLock } from '../../src/tree/write-barrier.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/fleet-env.js';
import { waitFor } from '../helpers/wait.js';

const MAX = 1024 * 1024;
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// Waits until every file named is over a second old (mtime and ctime): a state of the files, not a sleep.
async function settledFiles(files: string[]): Promise<void> {
  await waitFor('the files to be over a second old', async () => {
    const stats = await Promise.all(files.map((f) => stat(f)));
    return stats.every((s) => Date.now() - Math.max(s.mtimeMs, s.ctimeMs) > 1_100) ? true : undefined;
  }, 30_000);
}

async function setup() {
  const tree = await tempDir('settled-src');
  const store = new ObjectStore(await tempDir('settled-store'));
  const dir = await DirHandle.open(tree);
  addCleanup(() => dir.close());
  const objects = async () => (await readdir(store.kindDir('object'), { recursive: true }).catch(() => [] as string[])).filter((f) => f.length > 3);
  const options = (label: string) => ({ store, maxBytes: MAX, label, writeLock: keepsWriteLock(dir.fd) });
  return { tree, store, dir, objects, options };
}

describe('storeSettledFile', () => {
  it('stores settled files of every size up to the limit whole under their hash, larger then smaller', async () => {
    const { tree, store, dir, objects, options } = await setup();
    const sizes = [MAX, 70_000, 300_000, 65_537, MAX - 1];
    const contents = sizes.map((size, i) => Buffer.alloc(size, 0x61 + i));
    for (const [i, bytes] of contents.entries()) await writeFile(path.join(tree, `f${i}`), bytes);
    await settledFiles(sizes.map((_, i) => path.join(tree, `f${i}`)));
    for (const [i, bytes] of contents.entries()) {
      const outcome = await storeSettledFile(dir, Buffer.from(`f${i}`), options(`f${i}`));
      expect(outcome, `f${i}`).toMatchObject({ kind: 'stored', stored: { id: sha(bytes), bytes: bytes.length, written: true } });
      expect((await store.readObject(sha(bytes))).equals(bytes), `f${i}`).toBe(true);
    }
    expect(await objects()).toHaveLength(sizes.length);
  });

  it('leaves a young, sparse or too-large file to the streaming path, storing nothing', async () => {
    const { tree, dir, objects, options } = await setup();
    await writeFile(path.join(tree, 'big'), Buffer.alloc(MAX + 1, 1));
    await writeFile(path.join(tree, 'sparse'), Buffer.alloc(0));
    await truncate(path.join(tree, 'sparse'), 512 * 1024);
    await settledFiles([path.join(tree, 'big'), path.join(tree, 'sparse')]);
    await writeFile(path.join(tree, 'young'), Buffer.alloc(100_000, 2));
    for (const name of ['big', 'sparse', 'young']) {
      expect(await storeSettledFile(dir, Buffer.from(name), options(name)), name).toEqual({ kind: 'careful' });
    }
    expect(await objects()).toHaveLength(0);
  });

  it('never follows a symlink, and reads no directory or FIFO at the name', async () => {
    const { tree, dir, objects, options } = await setup();
    const outside = await tempDir('settled-outside');
    await writeFile(path.join(outside, 'secret'), Buffer.alloc(200_000, 7));
    await symlink(path.join(outside, 'secret'), path.join(tree, 'link'));
    await mkdir(path.join(tree, 'dir'));
    execFileSync('mkfifo', [path.join(tree, 'fifo')]);
    await settledFiles([path.join(outside, 'secret'), path.join(tree, 'dir'), path.join(tree, 'fifo')]);
    await expect(storeSettledFile(dir, Buffer.from('link'), options('link'))).rejects.toMatchObject({ code: 'ELOOP' });
    expect(await storeSettledFile(dir, Buffer.from('dir'), options('dir'))).toEqual({ kind: 'vanished' });
    expect(await storeSettledFile(dir, Buffer.from('fifo'), options('fifo'))).toEqual({ kind: 'vanished' });
    await expect(storeSettledFile(dir, Buffer.from('gone'), options('gone'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await objects()).toHaveLength(0);
  });
});
