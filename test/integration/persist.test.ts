// The persist protocol against real rsync and real directories.
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, readFile, readdir, readlink, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHarness, rejectsWith } from '../helpers/workspace-harness.js';
import { archivedMismatches, archivedNode, archivedStorage, archivedText, readArchivedTree } from '../helpers/archived.js';
import { readTree } from '../helpers/tree.js';
import { tempDir } from '../helpers/fleet-env.js';

describe('persist', () => {
  it('writes an immutable revision, flips current, and shares unchanged files with the revision before', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'alpha', 'dir/b.txt': 'beta', 'dir/deep/c.bin': Buffer.alloc(5000, 7) });
    const first = await h.persist('ws');
    expect(first).toMatchObject({ files: 3, changedFiles: 3, unchanged: false });
    const archive = h.services.archive;
    expect(await archive.current('ws')).toBe(first.revision);
    expect(await readArchivedTree(archive, 'ws')).toEqual(await readTree(h.live('ws')));

    await h.write('ws', { 'a.txt': 'ALPHA!' });
    const second = await h.persist('ws');
    expect(second, JSON.stringify(second)).toMatchObject({ files: 3, changedFiles: 1, deletedFiles: 0 });
    // Format 1 shares an unchanged file's inode (a hard link), format 2 its object.
    const stored = (rev: string, rel: string) => archivedStorage(archive, 'ws', rel, rev);
    expect(await stored(second.revision!, 'dir/b.txt')).toBe(await stored(first.revision!, 'dir/b.txt'));
    expect(await stored(second.revision!, 'a.txt')).not.toBe(await stored(first.revision!, 'a.txt'));
    // The first revision is untouched.
    expect(await archivedText(archive, 'ws', 'a.txt', first.revision!)).toBe('alpha');
    for (const rev of [first.revision!, second.revision!]) {
      expect(await archivedMismatches(archive, 'ws', rev)).toEqual([]);
      expect(await archive.readManifest('ws', rev)).toMatchObject({ workspaceId: 'ws', revision: rev, generation: 1, reason: 'turn-end' });
    }
    const head = await h.services.checkpoints.current('ws');
    expect(head?.workspaceRevision).toBe(second.revision);
  });

  it('upload-only keeps files the live tree no longer has; reconcile mirrors exactly', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'keep.txt': 'k', 'gone.txt': 'g', 'sub/gone2.txt': 'g2' });
    await h.persist('ws');
    await rm(path.join(h.live('ws'), 'gone.txt'));
    await rm(path.join(h.live('ws'), 'sub'), { recursive: true });
    await h.write('ws', { 'new.txt': 'n' });
    const upload = await h.persist('ws', { delete: false, reason: 'checkpoint' });
    expect(Object.keys(await readArchivedTree(h.services.archive, 'ws', upload.revision!)).sort()).toEqual(['gone.txt', 'keep.txt', 'new.txt', 'sub', 'sub/gone2.txt']);
    const reconcile = await h.persist('ws', { delete: true });
    expect(reconcile.deletedFiles).toBe(3);
    expect(await readArchivedTree(h.services.archive, 'ws')).toEqual(await readTree(h.live('ws')));
  });

  it('a checkpoint takes the live tree exactly (deletions and renames), so a restore gives back a state the tree had', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'keep.txt': 'k', 'gone.txt': 'g', 'sub/moved.txt': 'm', 'sub/x.txt': 'x' });
    await h.persist('ws');
    await rm(path.join(h.live('ws'), 'gone.txt'));
    await rename(path.join(h.live('ws'), 'sub/moved.txt'), path.join(h.live('ws'), 'moved.txt'));
    await h.write('ws', { 'new.txt': 'n' });
    const checkpoint = await h.persist('ws', { delete: false, exact: true, reason: 'checkpoint' });
    expect(checkpoint.deletedFiles).toBe(2);
    expect(await readArchivedTree(h.services.archive, 'ws')).toEqual(await readTree(h.live('ws')));
    expect(await h.services.archive.readRecord('ws', checkpoint.revision!)).toMatchObject({ mode: 'reconcile', reason: 'checkpoint' });
  });

  it('a checkpoint that would trip the shrink guard keeps what the tree lacks instead of failing', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}.txt`, `file ${i}`])));
    await h.persist('ws');
    // Mid-turn, a tool wipes most of the tree before rebuilding it (rm -rf node_modules; npm install).
    for (let i = 0; i < 15; i++) await rm(path.join(h.live('ws'), `f${i}.txt`));
    await h.write('ws', { 'f0.txt': 'rebuilt', 'new.txt': 'n' });
    const checkpoint = await h.persist('ws', { delete: false, exact: true, reason: 'checkpoint' });
    const archived = await readArchivedTree(h.services.archive, 'ws');
    expect(Object.keys(archived).length).toBe(21);
    expect(archived['f0.txt']).toBe(Buffer.from('rebuilt').toString('base64'));
    expect(archived['f1.txt']).toBe(Buffer.from('file 1').toString('base64'));
    expect(await h.services.archive.readRecord('ws', checkpoint.revision!)).toMatchObject({ mode: 'upload-only' });
    // A turn end still needs force for the mass deletion.
    await rejectsWith(h.persist('ws'), 'ShrinkGuard');
  });

  it('records nothing when nothing changed', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'a' });
    const first = await h.persist('ws');
    const again = await h.persist('ws', { delete: false, reason: 'checkpoint' });
    expect(again).toMatchObject({ unchanged: true, revision: first.revision });
    expect(await h.services.archive.revisions('ws')).toEqual([first.revision]);
  });

  it('the shrink guard refuses a mass deletion unless forced', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}.txt`, `file ${i}`])));
    const first = await h.persist('ws');
    for (let i = 0; i < 15; i++) await rm(path.join(h.live('ws'), `f${i}.txt`));
    await rejectsWith(h.persist('ws'), 'ShrinkGuard');
    expect(await h.services.archive.current('ws')).toBe(first.revision);
    expect(await h.services.archive.temporaries('ws')).toEqual([]);
    const forced = await h.persist('ws', { force: true });
    expect(forced.files).toBe(5);
  });

  it('an empty, missing or unmounted live tree never produces a revision', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'a', 'b/c.txt': 'c' });
    const first = await h.persist('ws');
    // What the workspace's archive holds on disk, and what its current revision says.
    const snapshot = async () => `${execFileSync('sh', ['-c', `cd '${h.services.archive.paths('ws').dir}' && find . | sort`]).toString()}${await archivedText(h.services.archive, 'ws', 'a.txt')}`;
    const archived = await snapshot();
    expect(archived.endsWith('\na')).toBe(true);
    // Empty (an unmounted mount point looks like this).
    await rm(h.live('ws'), { recursive: true });
    await mkdir(h.live('ws'));
    await rejectsWith(h.persist('ws', { delete: true }), 'EmptySource');
    // Missing.
    await rm(h.live('ws'), { recursive: true });
    const missing = await h.persist('ws', { delete: true }).then(
      () => null,
      (e: { code: string }) => e.code,
    );
    expect(['EmptySource', 'ProviderGone', 'ProviderPermanent']).toContain(missing);
    // A symlinked root is refused (rsync would read elsewhere).
    const elsewhere = await tempDir('elsewhere');
    await writeFile(path.join(elsewhere, 'x'), 'x');
    await symlink(elsewhere, h.live('ws'));
    await rejectsWith(h.persist('ws', { delete: true }), 'ProviderPermanent');
    expect(await h.services.archive.current('ws')).toBe(first.revision);
    expect(await snapshot()).toBe(archived);
  });

  it('same-second same-size rewrites are always archived (200 rewrites)', async () => {
    const h = await createHarness();
    await h.provision('ws');
    // Ten files rewritten per persist (each persist waits until the last write is 100 ms old; one file per persist was 22 s of the suite).
    const names = Array.from({ length: 10 }, (_, f) => `f${f}.txt`);
    await h.write('ws', { ...Object.fromEntries(names.map((name) => [name, 'seed'])), 'other.txt': 'x' });
    await h.persist('ws');
    const before = await stat(path.join(h.live('ws'), names[0]!));
    for (let i = 0; i < 20; i++) {
      const content = (f: number) => String(i * 10 + f).padStart(4, '0');
      for (const [f, name] of names.entries()) await writeFile(path.join(h.live('ws'), name), content(f));
      const result = await h.persist('ws', { delete: false, reason: 'checkpoint' });
      for (const [f, name] of names.entries()) expect(await archivedText(h.services.archive, 'ws', name), `iteration ${i}, ${name} (${result.revision})`).toBe(content(f));
    }
    expect(before.size).toBe(4);
  });

  it('a stale generation gets StaleGeneration and writes nothing', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'a' });
    await h.persist('ws');
    const listing = await readdir(h.services.archive.paths('ws').revs);
    await h.write('ws', { 'a.txt': 'changed' });
    for (const generation of [0, 2, 7]) await rejectsWith(h.persist('ws', { generation }), 'StaleGeneration');
    expect(await readdir(h.services.archive.paths('ws').revs)).toEqual(listing);
    expect(Number(await h.services.redis.hget(h.services.keys.counters(), 'fenceRejections'))).toBe(3);
  });

  it('an interrupted restore leaves no ready marker: the next persist is refused and the archive is unchanged', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`d/f${i}.bin`, Buffer.alloc(20_000, i)])));
    const first = await h.persist('ws');
    const address = (await h.services.addresses.get('ws'))!;
    const provider = h.services.providerFor(address);
    const controller = new AbortController();
    const restore = provider.importTree(address.handle, h.services.archive.paths('ws').revision(first.revision!), controller.signal);
    controller.abort(new Error('killed'));
    await restore.then(
      () => undefined,
      () => undefined,
    );
    expect(await provider.readReady(address.handle, AbortSignal.timeout(5_000))).toBeNull();
    await rejectsWith(h.persist('ws'), 'NotReady');
    expect(await h.services.archive.revisions('ws')).toEqual([first.revision]);
    expect(await h.services.archive.temporaries('ws')).toEqual([]);
  });

  it('hostile trees: nothing from outside the workspace enters the archive and restore follows no symlink', async () => {
    const h = await createHarness();
    const host = await tempDir('host-secret');
    const canary = `CANARY-${Date.now()}-${Math.random()}`;
    await writeFile(path.join(host, 'key'), canary);
    await h.provision('ws');
    const root = h.live('ws');
    await writeFile(path.join(root, 'normal.txt'), 'ok');
    await symlink(path.join(host, 'key'), path.join(root, 'abs_link'));
    await symlink('../../../../../../../../..' + host + '/key', path.join(root, 'rel_escape'));
    await symlink('loop_b', path.join(root, 'loop_a'));
    await symlink('loop_a', path.join(root, 'loop_b'));
    await symlink(host, path.join(root, 'dir_link'));
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    await writeFile(path.join(root, 'new\nline'), 'nl');
    await writeFile(path.join(root, '-rf'), 'dash');
    await writeFile(Buffer.concat([Buffer.from(root + '/bad-'), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]), 'bad utf8');
    await writeFile(path.join(root, 'n'.repeat(255)), 'long name');
    const result = await h.persist('ws');
    expect(result.unchanged).toBe(false);

    const archiveRoot = h.config.paths.archiveRoot;
    const all = execFileSync('sh', ['-c', `find '${archiveRoot}' -type f -print0 | xargs -0 cat`]).toString('latin1');
    expect(all.includes(canary)).toBe(false);
    const archive = h.services.archive;
    expect(await archivedNode(archive, 'ws', 'abs_link')).toEqual({ type: 'symlink', target: path.join(host, 'key') });
    expect(await archivedNode(archive, 'ws', 'dir_link')).toEqual({ type: 'symlink', target: host });
    expect(await archivedText(archive, 'ws', 'new\nline')).toBe('nl');
    expect(await archivedText(archive, 'ws', '-rf')).toBe('dash');
    expect(await archivedText(archive, 'ws', 'n'.repeat(255))).toBe('long name');
    expect((await archivedNode(archive, 'ws', Buffer.concat([Buffer.from('bad-'), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')])))?.type).toBe('file');
    expect(await archivedMismatches(archive, 'ws', result.revision!)).toEqual([]);
    expect(await readdir(host)).toEqual(['key']);

    // Restore into a new incarnation: symlinks come back verbatim, nothing outside is touched.
    const address = (await h.services.addresses.get('ws'))!;
    await h.services.providerFor(address).destroy(address.handle, AbortSignal.timeout(10_000));
    const restored = await h.provision('ws');
    expect(restored.outcome).toBe('restored');
    expect(await readlink(path.join(h.live('ws'), 'dir_link'))).toBe(host);
    expect(await readFile(path.join(h.live('ws'), 'normal.txt'), 'utf8')).toBe('ok');
    expect(await readdir(host)).toEqual(['key']);
    expect(await readFile(path.join(host, 'key'), 'utf8')).toBe(canary);
    // Writing through a symlink of the tree is refused.
    const live = (await h.services.addresses.get('ws'))!;
    await rejectsWith(
      h.services.providerFor(live).writeFiles(live.handle, [{ path: 'dir_link/pwned', content: Buffer.from('x') }], AbortSignal.timeout(5_000)),
      'PayloadInvalid',
    );
    expect(await readdir(host)).toEqual(['key']);
  });
});
