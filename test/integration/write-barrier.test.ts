// The write barrier (src/tree/write-barrier.ts) against a write(2) really stalled mid-copy
// (test/fixtures/stalled-write.py): it waits while the write holds the inode's lock, answers
// false at its bound, returns once the write has finished with the file whole, and never holds
// more than MAX_IN_FLIGHT thread-pool threads however many writes stall. The machine's
// temporary directory is ext4.
import { mkdtemp, open, readFile, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keepsWriteLock, MAX_IN_FLIGHT, writesDone } from '../../src/tree/write-barrier.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { stallWrite, type StalledWriter } from '../helpers/stalled-writer.js';

const SIZE = 1 << 20;
let dir: string | undefined;
const writers: StalledWriter[] = [];
const handles: FileHandle[] = [];

afterEach(async () => {
  for (const writer of writers.splice(0)) writer.kill();
  for (const handle of handles.splice(0)) await handle.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

// A file of SIZE bytes of 'a', open for reading, with its inode key.
async function file(name: string): Promise<{ path: string; fd: number; inode: string }> {
  dir ??= await mkdtemp(path.join(tmpdir(), 'write-barrier-'));
  const at = path.join(dir, name);
  await writeFile(at, Buffer.alloc(SIZE, 'a'));
  const handle = await open(at, 'r');
  handles.push(handle);
  const stats = await stat(at, { bigint: true });
  return { path: at, fd: handle.fd, inode: `${stats.dev}:${stats.ino}` };
}

describe('writesDone', () => {
  it('waits for a write(2) stalled mid-copy and returns once it has finished, the file whole', async () => {
    const f = await file('f');
    const root = await DirHandle.open(dir!);
    try {
      expect(keepsWriteLock(root.fd), `${dir} is on a filesystem the barrier knows (ext4 or xfs)`).toBe(true);
    } finally {
      await root.close();
    }
    const writer = await stallWrite(f.path, 'b');
    writers.push(writer);
    // Half-written now, as two reads in a row would both see it.
    const torn = await readFile(f.path);
    expect(torn.subarray(0, SIZE / 2).equals(Buffer.alloc(SIZE / 2, 'b'))).toBe(true);
    expect(torn.subarray(SIZE / 2).equals(Buffer.alloc(SIZE / 2, 'a'))).toBe(true);
    // While the write holds the lock the barrier cannot pass: false at its bound.
    expect(await writesDone(f.fd, f.inode, 300)).toBe(false);
    // Its barrier is still waiting in the pool: the inode gets no second one.
    expect(await writesDone(f.fd, f.inode, 60_000)).toBe(false);
    await writer.release();
    // The first barrier returns with the write; then a new one passes, and the file is whole.
    await expect.poll(() => writesDone(f.fd, f.inode, 60_000), { timeout: 30_000 }).toBe(true);
    expect((await readFile(f.path)).equals(Buffer.alloc(SIZE, 'b'))).toBe(true);
  });

  it(`holds at most ${MAX_IN_FLIGHT} pool threads: with that many writes stalled, another file's barrier waits its turn`, async () => {
    expect(MAX_IN_FLIGHT).toBe(2);
    const [s1, s2, quiet] = [await file('s1'), await file('s2'), await file('quiet')];
    for (const f of [s1, s2]) writers.push(await stallWrite(f.path, 'b'));
    const stuck = [writesDone(s1.fd, s1.inode, 200), writesDone(s2.fd, s2.inode, 200)];
    expect(await Promise.all(stuck)).toEqual([false, false]);
    // No write on this one, but both places in the pool are taken by barriers that have not returned.
    expect(await writesDone(quiet.fd, quiet.inode, 300)).toBe(false);
    await writers[0]!.release();
    // A place is free once the first barrier has returned.
    await expect.poll(() => writesDone(quiet.fd, quiet.inode, 60_000), { timeout: 30_000 }).toBe(true);
    await writers[1]!.release();
    await expect.poll(() => writesDone(s2.fd, s2.inode, 60_000), { timeout: 30_000 }).toBe(true);
  });

  it('answers false for a descriptor it cannot open again; keepsWriteLock is false for one that is not open', async () => {
    expect(await writesDone(987_654, '0:0', 5_000)).toBe(false);
    expect(keepsWriteLock(987_654)).toBe(false);
  });
});
