// The base registry's multi-key changes are one script each, checked against what they read:
// a rollback or a retirement racing an activation never leaves the lane inconsistent.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BaseRegistry, type BaseEntry } from '../../src/state/base-registry.js';
import { runGc } from '../../src/gc/run-gc.js';
import { createLogger } from '../../src/logger.js';
import { createServices } from '../../src/app/services.js';
import { addCleanup } from '../helpers/cleanup.js';
import { delegatingProvider } from '../helpers/delegating-provider.js';
import { deferred } from '../helpers/fleet-harness.js';
import { testConnection } from '../helpers/fleet-env.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';

const DAY = 86_400_000;

// Registers a ready local base (its snapshot directory included) created `ageMs` ago.
async function base(h: Harness, id: string, ageMs = 0): Promise<void> {
  await mkdir(path.join(h.config.paths.snapshotRoot, id, 'tree'), { recursive: true });
  await writeFile(path.join(h.config.paths.snapshotRoot, id, 'tree', 'f'), id);
  const now = Date.now();
  await h.services.bases.register({ provider: 'local', snapshotId: id, version: id, manifestHash: id, name: 'b', runtime: 'node22', lane: 'default', status: 'ready', sourceSandboxId: null, error: null, createdAt: now - ageMs, readyAt: now, expiresAt: null });
}

// A registry that lets another operator activate `c` the first time it reads entry `b`.
class RacingRegistry extends BaseRegistry {
  raced = false;
  override async get(snapshotId: string): Promise<BaseEntry | null> {
    if (!this.raced && snapshotId === 'b') {
      this.raced = true;
      await new BaseRegistry(this.redis, this.keys).activate('c');
    }
    return super.get(snapshotId);
  }
}

describe('base registry', () => {
  it('a candidate is found by its manifest hash only once promoted; a failed one never; each transition only from candidate', async () => {
    const h = await createHarness();
    const bases = h.services.bases;
    const entry = { provider: 'local', version: 'v', name: 'b', runtime: 'node22', lane: 'default', sourceSandboxId: null, error: null, createdAt: Date.now(), readyAt: null, expiresAt: null };
    await bases.register({ ...entry, snapshotId: 'cand', manifestHash: 'h1', status: 'candidate' });
    expect(await bases.readyByHash('local', 'h1')).toBeNull();
    expect(await bases.promote('cand')).toBe(true);
    expect(await bases.readyByHash('local', 'h1')).toMatchObject({ snapshotId: 'cand', status: 'ready', testedAt: expect.any(Number) });
    expect(await bases.promote('cand')).toBe(false);
    expect(await bases.failCandidate('cand', 'late')).toBe(false);
    expect((await bases.get('cand'))?.status).toBe('ready');

    await bases.register({ ...entry, snapshotId: 'bad', manifestHash: 'h2', status: 'candidate' });
    expect(await bases.failCandidate('bad', 'smoke check 1 failed')).toBe(true);
    expect(await bases.get('bad')).toMatchObject({ status: 'failed', error: 'smoke check 1 failed', testedAt: expect.any(Number) });
    expect(await bases.promote('bad')).toBe(false);
    expect(await bases.readyByHash('local', 'h2')).toBeNull();
    await expect(bases.activate('bad', { force: true })).rejects.toThrow(/is failed/);
  });

  it('19.7: a rollback racing an activation rolls back from what is active when it runs; no base loses its protection', async () => {
    const h = await createHarness();
    for (const id of ['a', 'b', 'c']) await base(h, id);
    await h.services.bases.activate('a');
    await h.services.bases.activate('b');
    const racing = new RacingRegistry(h.services.redis, h.services.keys);
    expect(await racing.rollback('default', 'local')).toEqual({ from: 'c', to: 'b' });
    expect(await h.services.bases.active('default', 'local')).toMatchObject({ snapshotId: 'b' });
    expect((await h.services.bases.get('b'))?.previousSnapshotId).toBe('c');
    // The base that was active a moment ago stays protected as the rollback candidate.
    expect(await h.services.bases.isActiveOrCandidate('c')).toBe(true);
    expect((await h.services.bases.list()).filter((e) => e.active).map((e) => e.snapshotId)).toEqual(['b']);
  });

  it('19.7: an activation racing a GC retirement never leaves an active base retired', async () => {
    const h = await createHarness();
    await base(h, 'old', 15 * DAY);
    const real = h.services.providers.get('local');
    const deleting = deferred();
    const release = deferred();
    const gated = delegatingProvider(real, {
      deleteSnapshot: async (id, signal) => {
        deleting.resolve();
        await release.promise;
        return real.deleteSnapshot(id, signal);
      },
    });
    const gcServices = createServices({ config: h.config, redis: testConnection(h.config), logger: createLogger({ level: 'silent' }), extraProviders: [gated] });
    addCleanup(() => gcServices.close());
    const gc = runGc(gcServices, { kind: 'bases', dryRun: false, limit: 10 }, AbortSignal.timeout(30_000));
    await deleting.promise;
    // An operator activates the base while GC is deleting its snapshot.
    const activation = await h.services.bases.activate('old').then(
      () => 'activated',
      (error: { code?: string }) => error.code,
    );
    release.resolve();
    expect((await gc).items.map((i) => i.id)).toEqual(['old']);
    const entry = (await h.services.bases.get('old'))!;
    expect({ active: entry.active, status: entry.status }).toEqual({ active: false, status: 'retired' });
    expect(activation).toBe('BaseRegistry');
  });

  it('19.7: GC retires an old unreferenced base, keeps a young one, and finishes a retirement a crash left behind', async () => {
    const h = await createHarness();
    await base(h, 'old', 15 * DAY);
    await base(h, 'young', 13 * DAY);
    await base(h, 'half', 20 * DAY);
    expect(await h.services.bases.beginRetire('half', Date.now() - 14 * DAY)).toEqual({ claimed: true });
    // A crash here: 'half' is retiring, its snapshot still there; it can no longer be activated.
    await expect(h.services.bases.activate('half')).rejects.toMatchObject({ code: 'BaseRegistry' });
    const result = await runGc(h.services, { kind: 'bases', dryRun: false, limit: 10 }, AbortSignal.timeout(30_000));
    expect(result.items.map((i) => i.id).sort()).toEqual(['half', 'old']);
    expect((await h.services.bases.get('young'))?.status).toBe('ready');
    expect((await h.services.bases.get('half'))?.status).toBe('retired');
  });

  it('retention counts from rotation: a base rotated out 13 days ago is kept, one rotated out 15 days ago goes', async () => {
    const h = await createHarness();
    // Four bases, all created 30 days ago, activated one after the other.
    for (const id of ['a', 'b', 'c', 'd']) await base(h, id, 30 * DAY);
    const { bases } = h.services;
    await bases.activate('a');
    await bases.activate('b');
    // 'a' is still b's rollback target: protected, not rotated.
    expect((await bases.get('a'))?.rotatedAt).toBeNull();
    const before = Date.now();
    await bases.activate('c');
    // Now 'a' is protected no more: its retention starts.
    expect((await bases.get('a'))?.rotatedAt).toBeGreaterThanOrEqual(before);
    await bases.activate('d');
    expect((await bases.get('b'))?.rotatedAt).toBeGreaterThanOrEqual(before);
    expect([(await bases.get('c'))?.rotatedAt, (await bases.get('d'))?.rotatedAt]).toEqual([null, null]);
    // Backdated instead of waiting.
    await h.services.redis.hset(h.services.keys.base('a'), 'rotatedAt', String(Date.now() - 15 * DAY));
    await h.services.redis.hset(h.services.keys.base('b'), 'rotatedAt', String(Date.now() - 13 * DAY));

    const listed = await runGc(h.services, { kind: 'bases', dryRun: true, limit: 10 }, AbortSignal.timeout(30_000));
    expect(listed.items.map((i) => i.id)).toEqual(['a']);
    expect(listed.items[0]!.description).toMatch(/rotated out \d{4}-/);
    expect((await bases.get('a'))?.status).toBe('ready');
    const retired = await runGc(h.services, { kind: 'bases', dryRun: false, limit: 10 }, AbortSignal.timeout(30_000));
    expect(retired.items.map((i) => i.id)).toEqual(['a']);
    expect((await bases.get('a'))?.status).toBe('retired');
    // Created 30 days ago, but out of rotation for 13: kept.
    expect((await bases.get('b'))?.status).toBe('ready');
    expect(await bases.beginRetire('b', Date.now() - 14 * DAY)).toEqual({ claimed: false, why: 'too young' });
  });
});
