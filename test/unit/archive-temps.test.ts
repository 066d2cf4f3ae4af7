// The archive's temporaries: ArchiveStore names them in one place and recognises exactly those
// names; a failed manifest write, link flip or commit removes what it wrote.
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { storeTempName, storeTempPrefix, tempKindOf } from '../../src/archive/archive-paths.js';
import { ArchiveStore } from '../../src/archive/archive-store.js';
import type { RevisionManifest } from '../../src/archive/manifest.js';
import { tempDir } from '../helpers/fleet-env.js';

const REV = 'r20261130T101530123Z-g3-k7f2q9';

const manifest = (revision: string): RevisionManifest => ({
  format: 1,
  workspaceId: 'ws',
  revision,
  generation: 3,
  reason: 'manual',
  turnId: null,
  parent: null,
  mode: 'reconcile',
  createdAt: new Date(0).toISOString(),
  files: 0,
  bytes: 0,
  treeHash: '0'.repeat(64),
  entries: [],
});

// Everything below the workspace's archive directory, relative to it.
async function listing(archive: ArchiveStore): Promise<string[]> {
  const entries = await readdir(archive.paths('ws').dir, { recursive: true });
  return entries.sort();
}

describe('archive temporaries', () => {
  it('recognises what the paths build, and nothing else', () => {
    const paths = new ArchiveStore('/a').paths('ws');
    const kindOf = (full: string) => tempKindOf(path.dirname(full) === paths.revs ? 'revs' : 'dir', path.basename(full));
    expect(kindOf(paths.tmp(REV))).toBe('revision');
    expect(kindOf(paths.manifestTmp(REV, '1a2b3c4d'))).toBe('manifest');
    expect(kindOf(paths.currentTmp('1a2b3c4d'))).toBe('current');
    for (const committed of [paths.revision(REV), paths.manifest(REV), paths.current]) expect(kindOf(committed), committed).toBeNull();
    for (const name of [`${REV}.manifest.json.tmp-`, `${REV}.manifest.json.tmp-XYZ`, `evil.manifest.json.tmp-1a`, `${REV}.manifest.json.tmp-1a/x`, 'current.tmp-1a']) {
      expect(tempKindOf('revs', name), name).not.toBe('manifest');
    }
    for (const name of ['current.tmp-', 'current.tmp-zz', 'xcurrent.tmp-1a', 'revs', '.tmp-x']) expect(tempKindOf('dir', name), name).toBeNull();
  });

  it('recognises the store temporaries every writer names (the walk, a writer thread, older fleets), and nothing else', () => {
    const writer = 'a1b2c3d4e5f60718';
    for (const name of [storeTempName('o', writer, 0), storeTempName('t', writer, 123_456_789), storeTempName('o', `${writer}w0`, 7), `${storeTempPrefix('o', `${writer}w1f`)}zz`, `o-${writer}`, `t-${writer}`]) {
      expect(tempKindOf('store', name), name).toBe('store');
    }
    for (const name of ['o-', `x-${writer}-1`, `o-${writer.slice(1)}-1`, `o-${writer}-`, `o-${writer}-1/x`, `o-${writer}W0-1`, `o-${writer}-${'1'.repeat(12)}`, 'objects']) {
      expect(tempKindOf('store', name), name).toBeNull();
    }
  });

  it('lists every kind, by path', async () => {
    const archive = new ArchiveStore(await tempDir('archive'));
    const paths = await archive.ensure('ws');
    await mkdir(paths.tmp(REV));
    await writeFile(paths.manifestTmp(REV, 'beef'), '{');
    await writeFile(paths.currentTmp('beef'), '');
    await writeFile(path.join(paths.revs, 'unrelated.tmp-1'), '');
    expect((await archive.temps('ws')).map((t) => [t.kind, t.name])).toEqual([
      ['current', 'current.tmp-beef'],
      ['revision', `.tmp-${REV}`],
      ['manifest', `${REV}.manifest.json.tmp-beef`],
    ]);
    expect(await archive.temporaries('ws')).toEqual([`.tmp-${REV}`]);
    expect(await new ArchiveStore(path.join(archive.root, 'gone')).temps('ws')).toEqual([]);
  });

  it('a failed manifest write removes its temporary file', async () => {
    const archive = new ArchiveStore(await tempDir('archive'));
    const paths = await archive.ensure('ws');
    // A non-empty directory where the manifest goes: the final rename fails.
    await mkdir(path.join(paths.manifest(REV), 'blocker'), { recursive: true });
    await expect(archive.writeManifest('ws', manifest(REV))).rejects.toMatchObject({ errno: expect.stringMatching(/^E/), retryable: expect.any(Boolean) });
    expect(await archive.temps('ws')).toEqual([]);
    expect(await listing(archive)).toEqual(['revs', `revs/${REV}.manifest.json`, `revs/${REV}.manifest.json/blocker`]);
  });

  it('a failed flip of current removes its temporary link', async () => {
    const archive = new ArchiveStore(await tempDir('archive'));
    const paths = await archive.ensure('ws');
    await mkdir(path.join(paths.current, 'blocker'), { recursive: true });
    await expect(archive.flipCurrent('ws', REV)).rejects.toMatchObject({ errno: expect.stringMatching(/^E/), retryable: expect.any(Boolean) });
    expect(await archive.temps('ws')).toEqual([]);
  });

  it('a failed commit removes the manifest written for it', async () => {
    const archive = new ArchiveStore(await tempDir('archive'));
    await archive.ensure('ws');
    await archive.writeManifest('ws', manifest(REV));
    // No temporary revision to rename: the commit fails.
    await expect(archive.commit('ws', REV)).rejects.toMatchObject({ code: 'StorageIo', errno: 'ENOENT' });
    expect(await listing(archive)).toEqual(['revs']);
  });
});
