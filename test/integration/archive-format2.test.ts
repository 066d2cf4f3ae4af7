// Archive format 2 through the real local provider: objects and trees instead of hard-linked
// trees, a persist that writes what changed, exact restores, O(1) rollbacks, format 1 workspaces
// moving over on their next persist, the racily-clean rule and files rewritten while read.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, link, lstat, mkdir, open, readdir, readFile, readlink, rm, stat, symlink, truncate, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lookupPath } from '../../src/archive/revision-reader.js';
import { SYNC_FILE_BYTES } from '../../src/archive/store-builder.js';
import { livePaths } from '../../src/providers/local/live-paths.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';
import { waitFor } from '../helpers/wait.js';
import { stallWrite } from '../helpers/stalled-writer.js';

const sha = (content: string | Buffer) => createHash('sha256').update(content).digest('hex');

// The archived bytes of `rel` in the current revision of a format 2 workspace.
async function archived(h: Harness, ws: string, rel: string): Promise<Buffer | null> {
  const revision = (await h.services.archive.current(ws))!;
  const record = (await h.services.archive.readRecord(ws, revision))!;
  const node = await lookupPath(h.services.archive.objects, record.root, Buffer.from(rel));
  return node?.type === 'f' ? readFile(h.services.archive.objects.objectPath(node.object)) : null;
}

async function restore(h: Harness, ws: string): Promise<string> {
  const address = (await h.services.addresses.get(ws))!;
  await h.services.providerFor(address).destroy(address.handle, AbortSignal.timeout(30_000));
  expect((await h.provision(ws)).outcome).toBe('restored');
  return h.live(ws);
}

// Waits until a writer has begun on `file` (written as zeros; the writer's versions are never 0):
// python starts slowly on a loaded machine, and persists made before it prove nothing.
async function writerStarted(file: string): Promise<void> {
  const firstByte = async () => {
    const handle = await open(file, 'r');
    try {
      const { buffer } = await handle.read(Buffer.alloc(1), 0, 1, 0);
      return buffer[0];
    } finally {
      await handle.close();
    }
  };
  await waitFor(`a writer to begin on ${file}`, async () => ((await firstByte()) !== 0 ? true : undefined), 60_000);
}

describe('archive format 2', () => {
  it('stores objects and trees, writes only what changed, keeps what upload-only keeps, restores exactly', async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const root = h.live('ws');
    const files: Record<string, string> = {};
    for (let d = 0; d < 5; d++) for (let f = 0; f < 20; f++) files[`dir${d}/sub/f${f}.txt`] = `content ${d}/${f}`;
    await h.write('ws', { ...files, 'same-a.txt': 'duplicate', 'same-b.txt': 'duplicate', 'new\nline': 'nl' });
    await symlink('../outside', path.join(root, 'link'));
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    await writeFile(path.join(root, 'sparse.bin'), 'head');
    await truncate(path.join(root, 'sparse.bin'), 32 * 1024 * 1024);
    await link(path.join(root, 'same-a.txt'), path.join(root, 'hard-link'));
    await chmod(path.join(root, 'dir0'), 0o750);
    // Older than the racily-clean window, as files are that an agent wrote minutes ago.
    execFileSync('find', [root, '-type', 'f', '-exec', 'touch', '-h', '-d', '@1700000000', '{}', '+']);

    const first = await h.persist('ws');
    expect(first).toMatchObject({ files: 105, unchanged: false });
    const paths = h.services.archive.paths('ws');
    expect(await readdir(paths.revs)).toEqual([`${first.revision}.rev.json`]);
    expect(await readlink(paths.current)).toBe(`revs/${first.revision}.rev.json`);
    expect((await archived(h, 'ws', 'dir3/sub/f7.txt'))!.toString()).toBe('content 3/7');
    // Identical contents are one object; the sparse file's object keeps its holes.
    const record = (await h.services.archive.readRecord('ws', first.revision!))!;
    const a = await lookupPath(h.services.archive.objects, record.root, Buffer.from('same-a.txt'));
    const b = await lookupPath(h.services.archive.objects, record.root, Buffer.from('same-b.txt'));
    expect(a).toMatchObject({ type: 'f', object: sha('duplicate') });
    expect(b).toMatchObject({ object: sha('duplicate') });
    const sparse = await lookupPath(h.services.archive.objects, record.root, Buffer.from('sparse.bin'));
    const sparseObject = await stat(h.services.archive.objects.objectPath((sparse as { object: string }).object));
    expect(sparseObject.size).toBe(32 * 1024 * 1024);
    expect(sparseObject.blocks * 512).toBeLessThan(1024 * 1024);
    // The manifest view lists every path with content hashes, like format 1.
    const manifest = (await h.services.archive.readManifest('ws', first.revision!))!;
    expect(manifest.format).toBe(2);
    expect(manifest.entries.find((e) => e.p === 'dir3/sub/f7.txt')).toMatchObject({ t: 'f', h: sha('content 3/7'), s: 11 });

    // One changed file: one object and the trees on its path (file dir, its parent, the root).
    await writeFile(path.join(root, 'dir2/sub/f5.txt'), 'changed!!!!');
    const second = await h.persist('ws');
    expect(second).toMatchObject({ changedFiles: 1, newObjects: 1, newTrees: 3, unchanged: false });
    expect((await archived(h, 'ws', 'dir2/sub/f5.txt'))!.toString()).toBe('changed!!!!');
    // Nothing changed: nothing recorded.
    expect((await h.persist('ws')).unchanged).toBe(true);

    // Upload-only keeps deleted paths; reconcile drops them.
    await rm(path.join(root, 'dir4'), { recursive: true });
    const upload = await h.persist('ws', { delete: false, reason: 'checkpoint' });
    expect((await archived(h, 'ws', 'dir4/sub/f1.txt'))!.toString()).toBe('content 4/1');
    expect(upload.unchanged).toBe(true);
    const reconcile = await h.persist('ws');
    expect(reconcile).toMatchObject({ deletedFiles: 22, unchanged: false });
    expect(await archived(h, 'ws', 'dir4/sub/f1.txt')).toBeNull();

    // Restore: exact tree, holes, hard links, FIFO, symlink, modes.
    const live = await restore(h, 'ws');
    expect(await readFile(path.join(live, 'dir2/sub/f5.txt'), 'utf8')).toBe('changed!!!!');
    expect(await readlink(path.join(live, 'link'))).toBe('../outside');
    expect((await lstat(path.join(live, 'fifo'))).isFIFO()).toBe(true);
    expect((await lstat(path.join(live, 'hard-link'))).ino).toBe((await lstat(path.join(live, 'same-a.txt'))).ino);
    expect((await stat(path.join(live, 'dir0'))).mode & 0o777).toBe(0o750);
    const restoredSparse = await stat(path.join(live, 'sparse.bin'));
    expect(restoredSparse.blocks * 512).toBeLessThan(1024 * 1024);
    expect(await readdir(live)).not.toContain('dir4');
    // The restored tree passes the quick check: nothing is read again.
    const again = await h.persist('ws');
    expect(again).toMatchObject({ unchanged: true });
  });

  it('hard links keep their group after a restore, when the cache no longer vouches for them', async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const root = h.live('ws');
    await h.write('ws', { 'a.txt': 'linked', 'b.txt': 'b', 'c.txt': 'other' });
    await link(path.join(root, 'a.txt'), path.join(root, 'a-link'));
    await link(path.join(root, 'c.txt'), path.join(root, 'c-link'));
    execFileSync('find', [root, '-type', 'f', '-exec', 'touch', '-h', '-d', '@1700000000', '{}', '+']);
    await h.persist('ws');
    const live = await restore(h, 'ws');
    // A commit after the restore writes a stat cache for the new inodes.
    await writeFile(path.join(live, 'b.txt'), 'b2');
    await utimes(path.join(live, 'b.txt'), 1_700_000_000, 1_700_000_000);
    const after = await h.persist('ws');
    expect(after).toMatchObject({ unchanged: false, changedFiles: 1 });
    // Same mode set again: a new ctime, so the cache no longer vouches and the file is read again.
    await chmod(path.join(live, 'a.txt'), (await stat(path.join(live, 'a.txt'))).mode & 0o7777);
    expect(await h.persist('ws')).toMatchObject({ unchanged: true });
    // Two groups, never one: each restores as its own inode with its own content.
    const again = await restore(h, 'ws');
    const ino = async (name: string) => (await lstat(path.join(again, name))).ino;
    expect(await ino('a-link')).toBe(await ino('a.txt'));
    expect(await ino('c-link')).toBe(await ino('c.txt'));
    expect(await ino('a.txt')).not.toBe(await ino('c.txt'));
    expect(await readFile(path.join(again, 'c-link'), 'utf8')).toBe('other');
  });

  it('a rollback names the old root tree (no copy), and restores the live tree', async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'v1' });
    const v1 = await h.persist('ws');
    await h.write('ws', { 'a.txt': 'v2', 'b.txt': 'b' });
    await h.persist('ws');
    const address = (await h.services.addresses.get('ws'))!;
    const { rollbackWorkspace } = await import('../../src/persist/rollback-workspace.js');
    const rolled = await rollbackWorkspace(h.services, { workspaceId: 'ws', generation: address.generation, revision: v1.revision! }, h.ctx());
    const record = (await h.services.archive.readRecord('ws', rolled.revision))!;
    expect(record.root).toBe((await h.services.archive.readRecord('ws', v1.revision!))!.root);
    expect(await readFile(path.join(h.live('ws'), 'a.txt'), 'utf8')).toBe('v1');
    expect(await readdir(h.live('ws'))).toEqual(['a.txt']);
    expect(await h.services.archive.current('ws')).toBe(rolled.revision);
  });

  it('a format 1 workspace moves to format 2 with its next persist; its history reads as one', async () => {
    const h1 = await createHarness({ FLEET_ARCHIVE_FORMAT: '1' });
    await h1.provision('ws');
    await h1.write('ws', { 'keep.txt': 'kept', 'dir/x.txt': 'x' });
    const old = await h1.persist('ws');
    const h2 = await createHarness({ FLEET_ARCHIVE_FORMAT: '2', REDIS_URL: h1.env.REDIS_URL!, FLEET_PREFIX: h1.env.FLEET_PREFIX!, FLEET_HOME: h1.env.FLEET_HOME! });
    await rm(path.join(h2.live('ws'), 'dir'), { recursive: true });
    const moved = await h2.persist('ws', { delete: false, reason: 'checkpoint' });
    expect(await h2.services.archive.formatOf('ws', moved.revision!)).toBe(2);
    expect((await archived(h2, 'ws', 'dir/x.txt'))!.toString()).toBe('x');
    expect(await h2.services.archive.revisions('ws')).toEqual([old.revision, moved.revision].sort());
    expect((await h2.services.archive.readManifest('ws', old.revision!))!.format).toBe(1);
    // The old revision still restores (rollback to it writes format 1, the format it is in).
    const address = (await h2.services.addresses.get('ws'))!;
    const { rollbackWorkspace } = await import('../../src/persist/rollback-workspace.js');
    await rollbackWorkspace(h2.services, { workspaceId: 'ws', generation: address.generation, revision: old.revision! }, h2.ctx());
    expect(await readFile(path.join(h2.live('ws'), 'dir/x.txt'), 'utf8')).toBe('x');
  });

  it('the racily-clean rule: 1,000 same-size rewrites with the same mtime, each archived', { timeout: 300_000 }, async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    // Ten files rewritten each round, one persist per round: 1,000 rewrites in 100 persists. Each
    // persist waits until the last write is 100 ms old (a write(2) may still be copying), so one
    // file per persist spent 111 s of every CI run mostly in that wait.
    const files = Array.from({ length: 10 }, (_, f) => path.join(h.live('ws'), `f${f}.txt`));
    const rounds = Number(process.env.FLEET_RACY_ROUNDS ?? 100);
    for (let i = 0; i < rounds; i++) {
      const content = (f: number) => `v${String(i).padStart(6, '0')}-f${f}`;
      for (const [f, file] of files.entries()) {
        await writeFile(file, content(f));
        // Every version carries the same mtime, as rewrites within one clock tick do.
        await utimes(file, 1_800_000_000, 1_800_000_000);
      }
      await h.persist('ws');
      for (const f of files.keys()) expect((await archived(h, 'ws', `f${f}.txt`))!.toString(), `round ${i}, f${f}.txt`).toBe(content(f));
    }
  });

  it('a same-size rewrite whose mtime is put back is archived: the stat cache sees its ctime, in this process and in the next', async () => {
    const { persistWorkspace } = await import('../../src/persist/persist-workspace.js');
    const { persistDeps } = await import('../../src/app/persist-deps.js');
    const { StatCaches } = await import('../../src/archive/stat-caches.js');
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const file = path.join(h.live('ws'), 'f.txt');
    // Like `tar -x` or `cp -p` over a file: new bytes, same size, the old (long past) mtime.
    const rewrite = async (content: string) => {
      await writeFile(file, content);
      await utimes(file, 1_600_000_000, 1_600_000_000);
    };
    await rewrite('aaaa');
    await h.persist('ws');
    // This process: the cache kept in memory serves (its file is gone).
    await h.services.statCaches.flush();
    const cacheFile = path.join(livePaths(h.config.paths.liveRoot, 'ws').meta, 'stat-cache.json');
    await rm(cacheFile);
    await rewrite('bbbb');
    expect((await h.persist('ws')).changedFiles).toBe(1);
    expect((await archived(h, 'ws', 'f.txt'))!.toString()).toBe('bbbb');
    // A new process: no cache in memory, the file on disk is the one this process wrote.
    await h.services.statCaches.flush();
    expect(JSON.parse(await readFile(cacheFile, 'utf8')).revision).toBe(await h.services.archive.current('ws'));
    await rewrite('cccc');
    const address = (await h.services.addresses.get('ws'))!;
    const fresh = new StatCaches(() => undefined);
    const result = await persistWorkspace({ ...persistDeps(h.services), statCaches: fresh }, { workspaceId: 'ws', generation: address.generation, delete: true, force: false, reason: 'turn-end', turnId: null, coveredSeq: 0 }, h.ctx());
    expect(result.changedFiles).toBe(1);
    expect((await archived(h, 'ws', 'f.txt'))!.toString()).toBe('cccc');
    // And a tree that did not change is not read again.
    expect((await h.persist('ws')).unchanged).toBe(true);
  });

  it.each([
    ['small files (stored without the thread pool)', 48 * 1024, true],
    ['files over the synchronous size (streamed)', 96 * 1024, false],
  ])('%s rewritten in halves during 30 persists: every archived version is one the writer wrote', { timeout: 300_000 }, async (_what, size, sync) => {
    expect(size <= SYNC_FILE_BYTES).toBe(sync);
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const dir = path.join(h.live('ws'), 'small');
    // Few enough that a round of the writer stays well within the walk's 1 s of waiting on a loaded machine (past it files are read at once).
    const count = 16;
    await mkdir(dir);
    for (let i = 0; i < count; i++) await writeFile(path.join(dir, `f${i}`), Buffer.alloc(size, 0));
    await h.persist('ws');
    // A writer rewriting the files in place, each version of a file in two halves 2 ms apart (what
    // a write(2) descheduled mid-copy on a busy machine looks like: the file half-written, its
    // ctime set when the write began), one round of all files, then a pause. Two reads in a row of
    // a half-written file agree, and its stat does not move between them: only leaving a file
    // changed in the last 100 ms to settle (WRITE_STALL_NS) keeps the half-written state out.
    const writer = spawn('python3', ['-c', `
import os, sys, time
size, count = int(sys.argv[2]), int(sys.argv[3])
half = size // 2
fds = [os.open(os.path.join(sys.argv[1], 'f%d' % i), os.O_WRONLY) for i in range(count)]
v = 1
while True:
    for fd in fds:
        b = bytes([v % 251 + 1])
        os.pwrite(fd, b * half, 0)
        time.sleep(0.002)
        os.pwrite(fd, b * (size - half), half)
        v += 1
    time.sleep(0.3)
`, dir, String(size), String(count)]);
    const versions = new Set<number>();
    let stored = 0;
    let waited = 0;
    try {
      // The persists run while it writes (python starts slowly on a loaded machine).
      await writerStarted(path.join(dir, 'f0'));
      for (let i = 0; i < 30; i++) {
        const result = await h.persist('ws', { delete: false, reason: 'checkpoint' });
        stored += result.changedFiles ?? 0;
        waited += result.writeWaitMs ?? 0;
        for (let f = 0; f < count; f++) {
          const bytes = (await archived(h, 'ws', `small/f${f}`))!;
          expect(bytes.length).toBe(size);
          expect(bytes.equals(Buffer.alloc(size, bytes[0]!)), `persist ${i}, f${f}: a torn version`).toBe(true);
          versions.add(bytes[0]!);
        }
      }
    } finally {
      writer.kill('SIGKILL');
    }
    // The persists did take new versions (the writer was not idle, the files not all kept), and some waited for a burst to settle.
    expect(stored).toBeGreaterThan(0);
    expect(versions.size).toBeGreaterThan(1);
    expect(waited).toBeGreaterThan(0);
  });

  it('a streamed file under a write(2) stalled mid-copy: the persist keeps its whole previous version, the next takes the new one', { timeout: 120_000 }, async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const file = path.join(h.live('ws'), 'big.bin');
    const size = 1 << 20;
    expect(size > SYNC_FILE_BYTES).toBe(true);
    await writeFile(file, Buffer.alloc(size, 'a'));
    await h.persist('ws');
    // Half 'b', half 'a', the write's inode lock held, its ctime just set: two reads agree on these
    // bytes, and without the write barrier both persists below committed them.
    const writer = await stallWrite(file, 'b');
    try {
      for (const reason of ['checkpoint', 'turn-end'] as const) {
        const result = await h.persist('ws', { delete: reason === 'turn-end', reason });
        const bytes = (await archived(h, 'ws', 'big.bin'))!;
        expect(bytes.equals(Buffer.alloc(size, 'a')), `${reason}: the archived version is the whole one before the write`).toBe(true);
        expect(result.changedFiles ?? 0).toBe(0);
      }
      await writer.release();
    } finally {
      writer.kill();
    }
    await h.persist('ws');
    expect((await archived(h, 'ws', 'big.bin'))!.equals(Buffer.alloc(size, 'b'))).toBe(true);
  });

  it('a 50 MB file rewritten in a loop during 50 persists: every archived version is one the writer wrote', { timeout: 600_000 }, async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const file = path.join(h.live('ws'), 'big.bin');
    const size = Number(process.env.FLEET_TORN_MB ?? 50) * 1024 * 1024;
    const persists = Number(process.env.FLEET_TORN_PERSISTS ?? 50);
    await writeFile(file, Buffer.alloc(size, 0));
    await h.persist('ws');
    // A writer rewriting the whole file in place, version after version (each one uniform bytes).
    const writer = spawn('python3', ['-c', `
import os, sys
size = int(sys.argv[2])
v = 1
while True:
    with open(sys.argv[1], 'r+b') as f:
        f.write(bytes([v % 251 + 1]) * size)
    v += 1
`, file, String(size)]);
    const versions = new Set<number>();
    try {
      await writerStarted(file);
      for (let i = 0; i < persists; i++) {
        await h.persist('ws', { delete: false, reason: 'checkpoint' });
        const bytes = (await archived(h, 'ws', 'big.bin'))!;
        expect(bytes.length).toBe(size);
        expect(bytes.equals(Buffer.alloc(size, bytes[0]!)), `persist ${i}: a torn version`).toBe(true);
        versions.add(bytes[0]!);
      }
      console.log(JSON.stringify({ test: 'torn-writer', sizeMB: size / 1024 / 1024, persists, distinctVersions: versions.size }));
    } finally {
      writer.kill('SIGKILL');
    }
  });
});
