// Building a revision by hard-linking unchanged files and copying only the rest (real trees).
// Archive format 1's on-disk layout (hard-linked revision directories) is what is under test:
// every harness pins FLEET_ARCHIVE_FORMAT=1, whatever FLEET_TEST_ARCHIVE_FORMAT says.
import { chmod, lstat, mkdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanTree, verifyTree, type RevisionManifest } from '../../src/archive/manifest.js';
import { buildRevisionTree } from '../../src/archive/build-revision-tree.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';
import { tempDir } from '../helpers/fleet-env.js';

const FORMAT_1 = { FLEET_ARCHIVE_FORMAT: '1' };
const BAD_UTF8 = Buffer.concat([Buffer.from('bad-'), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]);

// Inode of a path inside a revision.
async function inode(h: Harness, revision: string, rel: string | Buffer): Promise<number> {
  const root = h.services.archive.paths('ws').revision(revision);
  return (await lstat(typeof rel === 'string' ? path.join(root, rel) : Buffer.concat([Buffer.from(`${root}/`), rel]))).ino;
}

// Every committed revision still matches its manifest byte for byte.
async function expectAllRevisionsIntact(h: Harness): Promise<void> {
  for (const revision of await h.services.archive.revisions('ws')) {
    const manifest = (await h.services.archive.readManifest('ws', revision))!;
    expect((await verifyTree(h.services.archive.paths('ws').revision(revision), manifest)).mismatches, revision).toEqual([]);
  }
}

// The manifest entries of the live tree (what the current revision must equal, modulo inodes and mtimes).
async function liveEntries(h: Harness) {
  const scan = await scanTree(h.live('ws'), null);
  return scan.entries.map(({ p, t, m, s, h: hash, l }) => ({ p, t, m, s, h: hash, l }));
}

async function currentEntries(h: Harness) {
  const revision = (await h.services.archive.current('ws'))!;
  const manifest = (await h.services.archive.readManifest('ws', revision))!;
  return manifest.entries.map(({ p, t, m, s, h: hash, l }) => ({ p, t, m, s, h: hash, l }));
}

describe('persist: hard-link farm', () => {
  it('links unchanged files, copies changed and new ones, hostile names and modes included', async () => {
    const h = await createHarness(FORMAT_1);
    await h.provision('ws');
    const root = h.live('ws');
    await h.write('ws', { 'same.txt': 'same', '-rf': 'dash', 'new\nline': 'nl', 'dir/keep.bin': Buffer.alloc(4096, 1), [`${'n'.repeat(255)}`]: 'long' });
    await writeFile(Buffer.concat([Buffer.from(`${root}/`), BAD_UTF8]), 'bad utf8');
    await mkdir(path.join(root, 'private'), { mode: 0o750 });
    await writeFile(path.join(root, 'private', 'x'), 'x');
    await chmod(path.join(root, 'private'), 0o750);
    const first = await h.persist('ws');

    await writeFile(path.join(root, '-rf'), 'DASH!');
    await writeFile(path.join(root, 'new\nline'), 'NL!');
    await writeFile(Buffer.concat([Buffer.from(`${root}/`), BAD_UTF8]), 'still bad, longer');
    await mkdir(path.join(root, '--new dir'));
    await writeFile(path.join(root, '--new dir', '-v'), 'fresh');
    const second = await h.persist('ws');

    expect(second).toMatchObject({ changedFiles: 4, files: 8, unchanged: false });
    for (const rel of ['same.txt', 'dir/keep.bin', 'n'.repeat(255), 'private/x']) {
      expect(await inode(h, second.revision!, rel), rel).toBe(await inode(h, first.revision!, rel));
    }
    for (const rel of ['-rf', 'new\nline', BAD_UTF8]) {
      expect(await inode(h, second.revision!, rel), String(rel)).not.toBe(await inode(h, first.revision!, rel));
    }
    expect(await currentEntries(h)).toEqual(await liveEntries(h));
    expect((await stat(path.join(h.services.archive.paths('ws').current, 'private'))).mode & 0o777).toBe(0o750);
    expect(await readFile(path.join(h.services.archive.paths('ws').revision(first.revision!), '-rf'), 'utf8')).toBe('dash');
    await expectAllRevisionsIntact(h);
  });

  it('a mode-only change gets a new inode; the previous revision keeps its mode', async () => {
    const h = await createHarness(FORMAT_1);
    await h.provision('ws');
    await h.write('ws', { 'run.sh': '#!/bin/sh\necho hi\n', 'other.txt': 'o' });
    const first = await h.persist('ws');
    const file = path.join(h.live('ws'), 'run.sh');
    const { mtime } = await stat(file);
    await chmod(file, 0o755);
    expect((await stat(file)).mtime).toEqual(mtime);

    const second = await h.persist('ws');
    expect(second).toMatchObject({ changedFiles: 1, unchanged: false });
    expect(await inode(h, second.revision!, 'run.sh')).not.toBe(await inode(h, first.revision!, 'run.sh'));
    expect((await stat(path.join(h.services.archive.paths('ws').revision(first.revision!), 'run.sh'))).mode & 0o777).toBe(0o644);
    expect((await stat(path.join(h.services.archive.paths('ws').current, 'run.sh'))).mode & 0o777).toBe(0o755);
    await expectAllRevisionsIntact(h);
  });

  it('a same-size rewrite whose mtime differs only in nanoseconds is copied', async () => {
    const h = await createHarness(FORMAT_1);
    await h.provision('ws');
    await h.write('ws', { 'f.txt': 'aaaa' });
    const file = path.join(h.live('ws'), 'f.txt');
    await utimes(file, 1_700_000_000.000_001, 1_700_000_000.000_001);
    await h.persist('ws');
    await writeFile(file, 'bbbb');
    await utimes(file, 1_700_000_000.000_002, 1_700_000_000.000_002);
    const second = await h.persist('ws');
    expect(second.changedFiles).toBe(1);
    expect(await readFile(path.join(h.services.archive.paths('ws').current, 'f.txt'), 'utf8')).toBe('bbbb');
  });

  it('a revision recorded without mtimes is still a basis: unchanged files are compared with it on disk', async () => {
    const h = await createHarness(FORMAT_1);
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'a', 'b/c.txt': 'c', 'b/d.txt': 'd' });
    const first = await h.persist('ws');
    const manifestPath = h.services.archive.paths('ws').manifest(first.revision!);
    const legacy = JSON.parse(await readFile(manifestPath, 'utf8')) as RevisionManifest;
    await writeFile(manifestPath, JSON.stringify({ ...legacy, entries: legacy.entries.map(({ n: _n, ...rest }) => rest) }));

    await h.write('ws', { 'a.txt': 'A!' });
    const second = await h.persist('ws');
    expect(second).toMatchObject({ files: 3, changedFiles: 1 });
    expect(await inode(h, second.revision!, 'b/c.txt')).toBe(await inode(h, first.revision!, 'b/c.txt'));
    expect(await inode(h, second.revision!, 'a.txt')).not.toBe(await inode(h, first.revision!, 'a.txt'));
    expect(await currentEntries(h)).toEqual(await liveEntries(h));
    const manifest = (await h.services.archive.readManifest('ws', second.revision!))!;
    expect(manifest.entries.filter((e) => e.t === 'f').every((e) => /^\d+$/.test(e.n ?? ''))).toBe(true);
    await expectAllRevisionsIntact(h);
  });

  it('upload-only after the farm keeps deleted paths, reconcile drops them', async () => {
    const h = await createHarness(FORMAT_1);
    await h.provision('ws');
    await h.write('ws', { 'keep.txt': 'k', 'gone.txt': 'g', 'sub/gone2.txt': 'g2', 'sub/stay.txt': 's' });
    await h.persist('ws');
    await rm(path.join(h.live('ws'), 'gone.txt'));
    await rm(path.join(h.live('ws'), 'sub', 'gone2.txt'));
    await h.write('ws', { 'keep.txt': 'K!' });
    const upload = await h.persist('ws', { delete: false, reason: 'checkpoint' });
    const kept = (await h.services.archive.readManifest('ws', upload.revision!))!.entries.map((e) => e.p);
    expect(kept).toEqual(['gone.txt', 'keep.txt', 'sub', 'sub/gone2.txt', 'sub/stay.txt']);
    const reconcile = await h.persist('ws', { delete: true });
    expect(reconcile.deletedFiles).toBe(2);
    expect(await currentEntries(h)).toEqual(await liveEntries(h));
    await expectAllRevisionsIntact(h);
  });

  it('reports progress while it walks a large tree', async () => {
    const h = await createHarness(FORMAT_1);
    await h.provision('ws');
    await h.write('ws', Object.fromEntries(Array.from({ length: 4_500 }, (_, i) => [`d${i % 9}/f${i}`, `${i}`])));
    const first = await h.persist('ws');
    const previous = (await h.services.archive.readManifest('ws', first.revision!))!;
    const dest = path.join(await tempDir('farm'), 'rev');
    const reports: number[] = [];
    const built = await buildRevisionTree({
      source: h.live('ws'),
      dest,
      basis: { root: h.services.archive.paths('ws').revision(first.revision!), manifest: previous },
      keepMissing: false,
      limits: h.config.treeLimits,
      systemPath: h.config.systemPath,
      signal: AbortSignal.timeout(60_000),
      onProgress: (n) => reports.push(n),
    });
    expect(reports).toEqual([2_000, 4_000]);
    expect(built).toMatchObject({ linkedFiles: 4_500, copiedFiles: 0, walked: 4_509, vanished: 0, rootChanged: false });
    expect(built.entries).toEqual(previous.entries);
  });
});
