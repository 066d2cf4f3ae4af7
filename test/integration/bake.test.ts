// Baking base snapshots on the local provider: registry, reuse, single snapshot under
// concurrency, smoke failures, and secrets that never reach setup commands.
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bakeBase, type BakeResult } from '../../src/bake/bake-base.js';
import { BaseManifest, type BaseManifestInput } from '../../src/queues/base-manifest.js';
import { isFleetError } from '../../src/errors/fleet-error.js';
import { parsePayload } from '../../src/queues/payload.js';
import { createHarness, rejectsWith, type Harness } from '../helpers/workspace-harness.js';

const manifest = (over: Partial<BaseManifestInput> = {}) =>
  parsePayload('manifest', BaseManifest, {
    schemaVersion: 1,
    name: 'node-base',
    runtime: 'node22',
    files: [{ path: 'README.md', content: 'from the base' }],
    setup: ['mkdir -p src && echo "export default 1" > src/index.js'],
    smoke: ['test -f src/index.js'],
    ...over,
  });

// Runs a bake like a job would: retryable errors (lock contention) are retried.
async function bakeLikeAJob(h: Harness, m: BaseManifest, activate = false): Promise<BakeResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await bakeBase(h.services, { manifest: m, activate }, h.ctx(attempt));
    } catch (error) {
      if (!isFleetError(error) || !error.retryable || attempt > 20) throw error;
    }
  }
}

describe('bake (local provider)', () => {
  it('bakes, registers, activates; provisioning a new workspace copies the base', async () => {
    const h = await createHarness();
    const result = await bakeLikeAJob(h, manifest(), true);
    expect(result).toMatchObject({ reused: false, activated: true, provider: 'local', lane: 'default' });
    const entry = (await h.services.bases.get(result.snapshotId))!;
    expect(entry).toMatchObject({ status: 'ready', active: true, version: result.version, manifestHash: result.manifestHash });
    const tree = path.join(h.config.paths.snapshotRoot, result.snapshotId, 'tree');
    expect(JSON.parse(await readFile(path.join(tree, '.fleet-base.json'), 'utf8'))).toMatchObject({ version: result.version });
    const ws = await h.provision('fresh');
    expect(ws).toMatchObject({ outcome: 'created-from-base', source: result.snapshotId });
    expect(await readFile(path.join(h.live('fresh'), 'src', 'index.js'), 'utf8')).toBe('export default 1\n');
    // The seed sandbox is gone.
    expect((await h.services.providers.get('local').list(AbortSignal.timeout(5_000))).map((s) => s.workspaceId)).toEqual(['fresh']);
    // A second bake of the same manifest reuses the snapshot.
    expect(await bakeLikeAJob(h, manifest())).toMatchObject({ snapshotId: result.snapshotId, reused: true });
  });

  it('concurrent bakes of one manifest create one snapshot', async () => {
    const h = await createHarness();
    const results = await Promise.all([bakeLikeAJob(h, manifest()), bakeLikeAJob(h, manifest()), bakeLikeAJob(h, manifest())]);
    expect(new Set(results.map((r) => r.snapshotId)).size).toBe(1);
    expect(results.filter((r) => !r.reused)).toHaveLength(1);
    expect((await readdir(h.config.paths.snapshotRoot)).length).toBe(1);
    expect((await h.services.bases.list()).filter((e) => e.status === 'ready')).toHaveLength(1);
  });

  it('a failing smoke check registers the bake failed and never activates it', async () => {
    const h = await createHarness();
    const failing = manifest({ smoke: ['test -f does-not-exist'] });
    const error = await rejectsWith(bakeBase(h.services, { manifest: failing, activate: true }, h.ctx()), 'BakeFailed');
    expect(error.message).toContain('smoke check 1');
    const entries = await h.services.bases.list();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ status: 'failed', active: false });
    expect(await h.services.bases.active('default', 'local')).toBeNull();
    await rejectsWith(h.services.bases.activate(entries[0]!.snapshotId), 'BaseRegistry');
    expect(await readdir(h.config.paths.snapshotRoot).catch(() => [])).toEqual([]);
  });

  it('setup commands see only the manifest env and allowlisted variables, never the fleet environment', async () => {
    const h = await createHarness({
      FLEET_ADMIN_PASSWORD: 'canary-fleet-token-1',
      MY_SERVICE_TOKEN: 'canary-service-token-2',
      DATABASE_PASSWORD: 'canary-password-3',
      PLAIN_BUT_NOT_ALLOWED: 'canary-plain-4',
      HTTP_PROXY: 'http://proxy.internal:3128',
    });
    const m = manifest({ setup: ['env > env.txt'], smoke: [], env: { NODE_ENV: 'test' }, envAllowlist: ['HTTP_PROXY'] });
    const result = await bakeLikeAJob(h, m);
    const env = await readFile(path.join(h.config.paths.snapshotRoot, result.snapshotId, 'tree', 'env.txt'), 'utf8');
    for (const canary of ['canary-fleet-token-1', 'canary-service-token-2', 'canary-password-3', 'canary-plain-4']) expect(env).not.toContain(canary);
    expect(env).toContain('HTTP_PROXY=http://proxy.internal:3128');
    expect(env).toContain('NODE_ENV=test');
  });
});
