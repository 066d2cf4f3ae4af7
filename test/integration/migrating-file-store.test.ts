// The app-side dual read: archive hit, miss → legacy read + high-priority backfill, absent file,
// symlinks never followed, and no legacy fallback once a workspace is migrated.
import { rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MigratingFileStore } from '../../src/index.js';
import { BlobLegacySource } from '../../src/backfill/blob-legacy-source.js';
import { createHarness } from '../helpers/workspace-harness.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { tempDir } from '../helpers/fleet-env.js';
import { writeLegacyWorkspace } from '../helpers/legacy-store.js';
import { waitFor } from '../helpers/wait.js';

describe('MigratingFileStore', () => {
  it('reads the archive, falls back to legacy on a miss and backfills at priority 1, returns null when absent', async () => {
    const h = await createHarness();
    const store = MigratingFileStore.connect({ config: h.config, client: h.services.client, connection: h.services.redis });
    await h.provision('m1');
    await h.write('m1', { 'a.txt': 'archived', 'dir/b.txt': 'b' });
    await h.persist('m1');
    await writeLegacyWorkspace(h.config.paths.legacyRoot, 'm1', [['a.txt', 'legacy a'], ['old/notes.md', 'legacy notes']]);
    const queue = h.services.client.pool.queue('backfill');

    // Hit: the archive's version, and nothing enqueued.
    expect((await store.readFile('m1', 'a.txt'))?.toString()).toBe('archived');
    expect(await queue.getDeduplicationJobId('backfill:m1')).toBeFalsy();

    // Miss: the legacy bytes, and the workspace's backfill at priority 1.
    expect((await store.readFile('m1', 'old/notes.md'))?.toString()).toBe('legacy notes');
    const jobId = await queue.getDeduplicationJobId('backfill:m1');
    const job = (await queue.getJob(jobId!))!;
    expect(job.opts.priority).toBe(1);
    expect(job.data).toEqual({ kind: 'workspace', workspaceId: 'm1', source: 'blob' });

    // Absent everywhere: null, never an error.
    expect(await store.readFile('m1', 'nothing/here.txt')).toBeNull();
    expect(await store.readFile('never-seen', 'x.txt')).toBeNull();

    await testWorkers(h.config, ['backfill']);
    await waitFor('the backfill to complete', async () => ((await job.getState()) === 'completed' ? true : undefined));
    expect(await h.services.redis.hexists(h.services.keys.migrated(h.services.keys.bucket('m1')), 'm1')).toBe(1);
    // Now served by the archive (the legacy copy could be gone).
    await rm(path.join(h.config.paths.legacyRoot, 'm1'), { recursive: true });
    expect((await store.readFile('m1', 'old/notes.md'))?.toString()).toBe('legacy notes');
    expect((await store.readFile('m1', 'a.txt'))?.toString()).toBe('archived');
    await store.close();
  });

  it('never follows symlinks and never resurrects files deleted after the migration', async () => {
    const h = await createHarness();
    const store = MigratingFileStore.connect({ config: h.config, client: h.services.client, connection: h.services.redis });
    const outside = await tempDir('outside');
    await writeFile(path.join(outside, 'secret'), 'secret');
    await h.provision('m2');
    await h.write('m2', { 'keep.txt': 'k', 'gone.txt': 'g', 'x/1': '1', 'x/2': '2' });
    await symlink(path.join(outside, 'secret'), path.join(h.live('m2'), 'out'));
    await symlink(outside, path.join(h.live('m2'), 'outdir'));
    await h.persist('m2');
    await writeLegacyWorkspace(h.config.paths.legacyRoot, 'm2', [['out', 'legacy out'], ['outdir/secret', 'legacy secret']]);
    // Symlinks in the archive are present (the archive wins) but never followed: no content, no fallback.
    expect(await store.readFile('m2', 'out')).toBeNull();
    expect(await store.readFile('m2', 'outdir/secret')).toBeNull();
    expect(await h.services.client.pool.queue('backfill').getDeduplicationJobId('backfill:m2')).toBeFalsy();

    // After the migration a reconcile deletes gone.txt; the legacy copy must not come back.
    await h.services.redis.hset(h.services.keys.migrated(h.services.keys.bucket('m2')), 'm2', JSON.stringify({ at: Date.now(), files: 0, bytes: 0, source: 'blob' }));
    await writeLegacyWorkspace(h.config.paths.legacyRoot, 'm2', [['gone.txt', 'legacy gone']]);
    await rm(path.join(h.live('m2'), 'gone.txt'));
    await h.persist('m2', { delete: true });
    expect(await store.readFile('m2', 'gone.txt')).toBeNull();
    expect((await store.readFile('m2', 'keep.txt'))?.toString()).toBe('k');

    // Bad input is refused at the edge.
    for (const bad of ['../m1/x', '/etc/passwd', '', 'a//b', 'a/./b']) await expect(store.readFile('m2', bad)).rejects.toMatchObject({ code: 'PayloadInvalid' });
    await expect(store.readFile('../m2', 'keep.txt')).rejects.toMatchObject({ code: 'PayloadInvalid' });
    // A legacy symlink is never followed either.
    await symlink(path.join(outside, 'secret'), path.join(h.config.paths.legacyRoot, 'm3'));
    expect(await store.readFile('m3', 'secret')).toBeNull();
  });

  it('serves the read even when the backfill request fails', async () => {
    const legacyRoot = await tempDir('legacy');
    await writeLegacyWorkspace(legacyRoot, 'm4', [['f.txt', 'legacy']]);
    const errors: unknown[] = [];
    const store = new MigratingFileStore({
      archiveRoot: await tempDir('archive'),
      legacy: new BlobLegacySource(legacyRoot),
      isMigrated: async () => false,
      requestBackfill: async () => {
        throw new Error('redis down');
      },
      onError: (error) => errors.push(error),
    });
    expect((await store.readFile('m4', 'f.txt'))?.toString()).toBe('legacy');
    expect(errors).toHaveLength(1);
  });
});
