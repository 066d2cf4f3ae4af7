// Restoring a format 2 revision (materializeRevision) on real directories: small files by one
// read and one write, large ones by copyFile, every entry owned by the workspace's uid as it is
// made, exact modes and times, and a damaged object refused with a typed error naming it.
import { execFileSync } from 'node:child_process';
import { chmod, lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeTree } from '../helpers/store-tree.js';
import { materializeRevision } from '../../src/archive/materialize-revision.js';
import { ObjectStore } from '../../src/archive/object-store.js';
import { StorageIoError } from '../../src/errors/storage-io-error.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { lookupPath } from '../../src/archive/revision-reader.js';

const UID = 54_321;
let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'fleet-materialize-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function materialize(store: ObjectStore, tree: string, dest: string, owner?: { uid: number; gid: number }) {
  await mkdir(dest, { mode: 0o700 });
  const handle = await DirHandle.open(dest);
  try {
    return await materializeRevision(store, tree, handle, { systemPath: process.env.PATH ?? '/usr/bin:/bin', signal: AbortSignal.timeout(60_000), ...(owner ? { owner } : {}) });
  } finally {
    await handle.close();
  }
}

describe('materializeRevision', () => {
  it('restores small and large files, links, FIFOs and modes, every entry owned by the given uid', async () => {
    const source = path.join(root, 'source');
    await mkdir(path.join(source, 'dir/deeper'), { recursive: true });
    await writeFile(path.join(source, 'small.txt'), 'small');
    await writeFile(path.join(source, 'empty'), '');
    const large = Buffer.alloc(3 * 1024 * 1024, 7);
    await writeFile(path.join(source, 'dir/large.bin'), large);
    await writeFile(path.join(source, 'dir/deeper/exec.sh'), '#!/bin/sh\n');
    await chmod(path.join(source, 'dir/deeper/exec.sh'), 0o751);
    await chmod(path.join(source, 'dir'), 0o750);
    await symlink('../../outside', path.join(source, 'dir/link'));
    execFileSync('mkfifo', [path.join(source, 'fifo')]);
    execFileSync('find', [source, '-exec', 'touch', '-h', '-d', '@1700000000.123456', '{}', '+']);
    const store = new ObjectStore(path.join(root, 'archive'));
    const tree = await storeTree(store, source);

    const dest = path.join(root, 'dest');
    const made = await materialize(store, tree, dest, { uid: UID, gid: UID });
    expect(made).toMatchObject({ files: 4, bytes: 5 + large.length + 10 });
    expect(await readFile(path.join(dest, 'small.txt'), 'utf8')).toBe('small');
    expect((await readFile(path.join(dest, 'dir/large.bin'))).equals(large)).toBe(true);
    expect((await stat(path.join(dest, 'dir/deeper/exec.sh'))).mode & 0o7777).toBe(0o751);
    expect((await stat(path.join(dest, 'dir'))).mode & 0o7777).toBe(0o750);
    expect((await stat(path.join(dest, 'small.txt'))).mtimeMs).toBe(1_700_000_000_123.456);
    for (const rel of ['.', 'small.txt', 'empty', 'dir', 'dir/large.bin', 'dir/deeper', 'dir/deeper/exec.sh', 'dir/link', 'fifo']) {
      const stats = await lstat(path.join(dest, rel));
      expect({ rel, uid: stats.uid, gid: stats.gid }).toEqual({ rel, uid: UID, gid: UID });
    }
    expect((await lstat(path.join(dest, 'fifo'))).isFIFO()).toBe(true);

    // Without an owner, everything stays the process's.
    const plain = path.join(root, 'plain');
    await materialize(store, tree, plain);
    expect((await lstat(path.join(plain, 'dir/deeper/exec.sh'))).uid).toBe(process.getuid!());
  });

  // A small file (one copy, its size looked at after) and a large one (copied by the kernel, whatever the object's length).
  for (const [label, content] of [['small', 'twelve bytes'], ['large', 'L'.repeat(300 * 1024)]] as const) {
    it(`an object shorter than its tree says is refused, typed and naming the object (${label} file)`, async () => {
      const source = path.join(root, 'source');
      await mkdir(source);
      await writeFile(path.join(source, 'file.txt'), content);
      const store = new ObjectStore(path.join(root, 'archive'));
      const tree = await storeTree(store, source);
      const node = await lookupPath(store, tree, Buffer.from('file.txt'));
      const object = store.objectPath((node as { object: string }).object);
      await chmod(object, 0o644);
      await truncate(object, 4);

      const error = await materialize(store, tree, path.join(root, 'dest')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageIoError);
      expect((error as StorageIoError).path).toBe(object);
      expect((error as Error).message).toContain(`object holds 4 bytes, its tree says ${content.length}`);
    });
  }
});
