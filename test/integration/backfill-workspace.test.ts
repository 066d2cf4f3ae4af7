// Backfill of single workspaces with the real local provider, real rsync and the test Redis:
// the archive (and the live tree) win over legacy files, hostile legacy entries are refused,
// live workspaces keep their backfilled files through the next reconcile, native snapshots
// restore through a scratch incarnation, and a re-run changes nothing.
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { backfillDeps } from '../../src/app/backfill-deps.js';
import { backfillWorkspace, type BackfillResult } from '../../src/backfill/backfill-workspace.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';
import { archivedFiles, diffFiles, filesOf, writeLegacyWorkspace } from '../helpers/legacy-store.js';
import { tempDir } from '../helpers/fleet-env.js';
import { archivedMismatches } from '../helpers/archived.js';

// Runs one backfill in-process.
function backfill(h: Harness, workspaceId: string, source: 'blob' | 'native' = 'blob'): Promise<BackfillResult> {
  return backfillWorkspace(backfillDeps(h.services), { workspaceId, source }, h.ctx());
}

const map = (entries: Record<string, string>) => new Map(Object.entries(entries).map(([k, v]) => [k, Buffer.from(v)]));

describe('backfill of one workspace', () => {
  it('copies a workspace without archive state, verifies it, and marks it migrated once', async () => {
    const h = await createHarness();
    const legacy = { 'src/app/main.py': 'print(1)\n', 'README.md': '# hi\n', 'empty.txt': '' };
    await writeLegacyWorkspace(h.config.paths.legacyRoot, 'w1', Object.entries(legacy));
    const result = await backfill(h, 'w1');
    expect(result).toMatchObject({ status: 'migrated', copiedFiles: 3, archivedFiles: 0, liveFiles: 0, skipped: [], conflicts: [] });
    expect(diffFiles(map(legacy), await archivedFiles(h.services.archive, 'w1'))).toEqual([]);
    const manifest = (await h.services.archive.readManifest('w1', result.revision!))!;
    expect(manifest).toMatchObject({ mode: 'backfill', reason: 'backfill', generation: 1, parent: null });
    expect(await archivedMismatches(h.services.archive, 'w1', result.revision!)).toEqual([]);
    // The revision is the attached head, fenced on the generation the backfill gave the workspace.
    expect((await h.services.checkpoints.current('w1'))?.workspaceRevision).toBe(result.revision);
    expect(await h.services.addresses.generation('w1')).toBe(1);
    const record = JSON.parse((await h.services.redis.hget(h.services.keys.migrated(h.services.keys.bucket('w1')), 'w1'))!);
    expect(record).toMatchObject({ files: 3, bytes: 'print(1)\n'.length + '# hi\n'.length, source: 'blob', revision: result.revision });

    // A second run adds nothing and records nothing.
    const history = await h.services.checkpoints.history('w1');
    expect(await backfill(h, 'w1')).toMatchObject({ status: 'already-migrated', copiedFiles: 0 });
    expect(await h.services.checkpoints.history('w1')).toEqual(history);
    expect(await h.services.archive.revisions('w1')).toEqual([result.revision]);
    expect(await h.services.redis.hget(h.services.keys.migrated(h.services.keys.bucket('w1')), 'w1')).toBe(JSON.stringify(record));
    // A workspace the legacy store does not hold is left alone (and not marked).
    expect(await backfill(h, 'nothing-here')).toMatchObject({ status: 'absent' });
    expect(await h.services.redis.hexists(h.services.keys.migrated(h.services.keys.bucket('nothing-here')), 'nothing-here')).toBe(0);
  });

  it('re-running after a crash between attach and the migrated mark records nothing new', async () => {
    const h = await createHarness();
    await writeLegacyWorkspace(h.config.paths.legacyRoot, 'w2', [['a.txt', 'A'], ['b/c.txt', 'C']]);
    const first = await backfill(h, 'w2');
    // Simulate the crash: the mark never happened.
    await h.services.redis.hdel(h.services.keys.migrated(h.services.keys.bucket('w2')), 'w2');
    const history = await h.services.checkpoints.history('w2');
    const second = await backfill(h, 'w2');
    expect(second).toMatchObject({ status: 'migrated', copiedFiles: 0, archivedFiles: 2, revision: first.revision });
    expect(await h.services.checkpoints.history('w2')).toEqual(history);
    expect(await h.services.archive.revisions('w2')).toEqual([first.revision]);
  });

  it('keeps the archive newer files: a legacy file never overwrites an archived path', async () => {
    const h = await createHarness();
    await h.provision('w3');
    await h.write('w3', { 'notes.md': 'archive version', 'src/x.py': 'x = 2' });
    await h.persist('w3');
    await writeLegacyWorkspace(h.config.paths.legacyRoot, 'w3', [['notes.md', 'legacy version'], ['src/x.py', 'x = 1'], ['src/y.py', 'y = 1']]);
    const result = await backfill(h, 'w3');
    expect(result).toMatchObject({ status: 'migrated', copiedFiles: 1, archivedFiles: 2 });
    expect(diffFiles(map({ 'notes.md': 'archive version', 'src/x.py': 'x = 2', 'src/y.py': 'y = 1' }), await archivedFiles(h.services.archive, 'w3'))).toEqual([]);
  });

  it('writes missing files into a live workspace (never over live paths), so the next reconcile keeps them', async () => {
    const h = await createHarness();
    const { generation } = await h.provision('w4');
    await h.write('w4', { 'kept.txt': 'archived' });
    await h.persist('w4');
    // Changed in the live tree but not persisted yet: the live version must survive.
    await h.write('w4', { 'draft.md': 'live draft (newer)' });
    await writeLegacyWorkspace(h.config.paths.legacyRoot, 'w4', [['kept.txt', 'legacy'], ['draft.md', 'legacy draft'], ['lib/util.py', 'def f(): pass'], ['data.bin', Buffer.alloc(70_000, 7)]]);
    const result = await backfill(h, 'w4');
    expect(result).toMatchObject({ status: 'migrated', generation, copiedFiles: 3, liveFiles: 2, archivedFiles: 1 });
    const live = await filesOf(h.live('w4'));
    expect(live.get('draft.md')?.toString()).toBe('live draft (newer)');
    expect(live.get('lib/util.py')?.toString()).toBe('def f(): pass');
    expect(live.get('data.bin')?.equals(Buffer.alloc(70_000, 7))).toBe(true);
    expect(live.get('kept.txt')?.toString()).toBe('archived');

    // The next turn-end reconcile mirrors the live tree: nothing backfilled is lost, the live draft wins.
    await h.persist('w4', { delete: true });
    const expected = map({ 'kept.txt': 'archived', 'draft.md': 'live draft (newer)', 'lib/util.py': 'def f(): pass' }).set('data.bin', Buffer.alloc(70_000, 7));
    expect(diffFiles(expected, await archivedFiles(h.services.archive, 'w4'))).toEqual([]);
  });

  it('refuses hostile legacy entries: symlinks are never followed, bad names never decoded', async () => {
    const h = await createHarness();
    const outside = await tempDir('outside');
    await writeFile(path.join(outside, 'secret'), 'secret');
    const dir = path.join(h.config.paths.legacyRoot, 'w5');
    await writeLegacyWorkspace(h.config.paths.legacyRoot, 'w5', [['ok.txt', 'ok']]);
    await symlink(path.join(outside, 'secret'), path.join(dir, 'link-out'));
    await symlink('ok.txt', path.join(dir, 'link-in'));
    await mkdir(path.join(dir, 'subdir'));
    await writeFile(path.join(dir, 'subdir', 'inner'), 'inner');
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    for (const name of ['\u2215etc\u2215passwd', '..\u2215escape', 'a\u2215\u2215b', 'trailing\u2215', '.\u2215dot']) await writeFile(path.join(dir, name), 'hostile');
    // A workspace directory that is a symlink is skipped as a whole.
    await mkdir(path.join(outside, 'ws'));
    await writeFile(path.join(outside, 'ws', 'stolen'), 'stolen');
    await symlink(path.join(outside, 'ws'), path.join(h.config.paths.legacyRoot, 'w6'));

    const result = await backfill(h, 'w5');
    expect(diffFiles(map({ 'ok.txt': 'ok' }), await archivedFiles(h.services.archive, 'w5'))).toEqual([]);
    const reasons = Object.fromEntries(result.skipped.map((s) => [s.name, s.reason]));
    expect(reasons).toMatchObject({ 'link-out': 'symlink', 'link-in': 'symlink', subdir: 'not-a-file', '\u2215etc\u2215passwd': 'hostile-name', '..\u2215escape': 'hostile-name', 'a\u2215\u2215b': 'hostile-name', 'trailing\u2215': 'hostile-name', '.\u2215dot': 'hostile-name', fifo: 'not-a-file' });
    expect(await readFile(path.join(outside, 'secret'), 'utf8')).toBe('secret');
    const refused = await backfill(h, 'w6');
    expect(refused).toMatchObject({ status: 'absent', skipped: [expect.objectContaining({ reason: 'symlink' })] });
    expect(await archivedFiles(h.services.archive, 'w6')).toEqual(new Map());
    // Not marked: a migrated workspace without any revision could never be provisioned again.
    expect(await h.services.redis.hexists(h.services.keys.migrated(h.services.keys.bucket('w6')), 'w6')).toBe(0);
    expect(await h.provision('w6')).toMatchObject({ outcome: 'created-empty' });
  });

  it('reports legacy paths that cannot coexist with the archive tree', async () => {
    const h = await createHarness();
    await h.provision('w7');
    await h.write('w7', { 'a': 'file a' });
    await h.persist('w7');
    await writeLegacyWorkspace(h.config.paths.legacyRoot, 'w7', [['a/b', 'under a file'], ['c', 'c file'], ['c/d', 'under c']]);
    const result = await backfill(h, 'w7');
    expect(result.conflicts.map((c) => c.path).sort()).toEqual(['a/b', 'c/d']);
    expect(diffFiles(map({ a: 'file a', c: 'c file' }), await archivedFiles(h.services.archive, 'w7'))).toEqual([]);
  });

  it('backfills from a provider-native snapshot through a scratch incarnation', async () => {
    const h = await createHarness();
    const { handle, generation } = await h.provision('w8');
    const files = { 'app/main.ts': 'export {}', 'odd name -x.txt': 'odd', 'bin/run.sh': '#!/bin/sh\necho hi\n' };
    await h.write('w8', files);
    const local = h.services.providers.get('local');
    const { snapshotId } = await local.snapshot(handle, { expirationMs: 0, signal: AbortSignal.timeout(30_000) });
    await h.services.checkpoints.record({ workspaceId: 'w8', generation, kind: 'provider_native', workspaceRevision: snapshotId, providerRef: 'local', reason: 'snapshot' });
    // The provider's incarnation is gone; only its native snapshot remains.
    await local.destroy(handle, AbortSignal.timeout(30_000));
    await h.services.addresses.unpublish('w8', generation);

    const result = await backfill(h, 'w8', 'native');
    expect(result).toMatchObject({ status: 'migrated', source: 'native', copiedFiles: 3 });
    expect(diffFiles(map(files), await archivedFiles(h.services.archive, 'w8'))).toEqual([]);
    // The scratch incarnation is destroyed; the workspace's own live directory was never touched.
    expect((await local.list(AbortSignal.timeout(5_000))).filter((s) => s.workspaceId.startsWith('backfill-scratch-'))).toEqual([]);
    // Migrated: a second run does not restore the snapshot again.
    expect(await backfill(h, 'w8', 'native')).toMatchObject({ status: 'already-migrated' });
  });

  it('a format 1 current revision keeps its files when the archive now writes format 2', async () => {
    const h1 = await createHarness({ FLEET_ARCHIVE_FORMAT: '1' });
    await h1.provision('w9');
    await h1.write('w9', { 'archived.txt': 'from the format 1 revision' });
    const old = await h1.persist('w9');
    const h2 = await createHarness({ FLEET_ARCHIVE_FORMAT: '2', REDIS_URL: h1.env.REDIS_URL!, FLEET_PREFIX: h1.env.FLEET_PREFIX!, FLEET_HOME: h1.env.FLEET_HOME! });
    await writeLegacyWorkspace(h2.config.paths.legacyRoot, 'w9', [['legacy.txt', 'from the legacy store']]);
    const result = await backfill(h2, 'w9');
    expect(result).toMatchObject({ status: 'migrated', copiedFiles: 1 });
    const files = await archivedFiles(h2.services.archive, 'w9');
    expect(diffFiles(map({ 'archived.txt': 'from the format 1 revision', 'legacy.txt': 'from the legacy store' }), files)).toEqual([]);
    expect((await h2.services.archive.readManifest('w9', result.revision!))!.parent).toBe(old.revision);
  });
});
