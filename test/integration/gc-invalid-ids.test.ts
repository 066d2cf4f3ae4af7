// GC never hands an id it read back to rm/destroy/deleteSnapshot without checking it (issue 12):
// ids planted in Redis (a checkpoint naming `../../victim` or `..`, a workspace id with `/`, a
// base snapshot `..`) or in a provider listing (a sandbox record carrying another workspace's
// handle) are skipped, logged with their value and counted, and nothing is deleted; valid
// garbage next to them is still collected. On main each of these deleted real data.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runGc, type GcResult } from '../../src/gc/run-gc.js';
import { createLogger } from '../../src/logger.js';
import { livePaths } from '../../src/providers/local/live-paths.js';
import type { GcKind } from '../../src/queues/gc.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';
import { readTree } from '../helpers/tree.js';

const signal = () => AbortSignal.timeout(60_000);
const LONG_AGO = Date.now() - 48 * 3_600_000;

// Runs a dry run and a real run of `kind` with a logger whose lines are kept.
async function gc(h: Harness, kind: GcKind): Promise<{ dry: GcResult; real: GcResult; warnings: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const services = { ...h.services, logger: createLogger({ level: 'warn', destination: sink }) };
  const dry = await runGc(services, { kind, dryRun: true, limit: 1_000 }, signal());
  const real = await runGc(services, { kind, dryRun: false, limit: 1_000 }, signal());
  return { dry, real, warnings: lines.filter((l) => l.msg === 'gc skipped an invalid id' && l.dryRun === false) };
}

// Everything a planted id could reach: the whole fleet home.
const homeTree = (h: Harness) => readTree(h.config.paths.home);

// Two workspaces with one persisted revision each; `victim` is the one the planted ids aim at.
async function twoWorkspaces(overrides: Record<string, string> = {}) {
  const h = await createHarness({ FLEET_UNATTACHED_GRACE_MS: '0', FLEET_BASE_RETENTION_MS: '0', FLEET_KEEP_REVISIONS: '1', FLEET_KEEP_REVISIONS_MIN_AGE_MS: '0', ...overrides });
  await h.provision('ws');
  await h.write('ws', { 'a.txt': 'a' });
  await h.persist('ws');
  const victim = await h.provision('victim');
  await h.write('victim', { 'private.txt': 'victim data' });
  await h.persist('victim');
  return { h, victim };
}

describe('gc skips ids that break their rule', () => {
  it('unattached: checkpoints naming ../../victim, .. (as a snapshot) or a workspace a/b are skipped; a real orphan still goes', async () => {
    const { h } = await twoWorkspaces();
    const record = (workspaceId: string, kind: 'portable_workspace' | 'provider_native', workspaceRevision: string) =>
      h.services.checkpoints.record({ workspaceId, generation: 1, kind, workspaceRevision }, LONG_AGO);
    await record('ws', 'portable_workspace', '../../victim');
    await record('ws', 'provider_native', '..');
    await record('a/b', 'portable_workspace', 'r20261130T101530123Z-g1-aaaaaa');
    // A genuine unattached revision of ws (its persist "died" before attach).
    await h.write('ws', { 'b.txt': 'b' });
    const orphan = (await h.persist('ws')).revision!;
    const orphanRecord = (await h.services.checkpoints.byRevision('ws', 'portable_workspace', orphan))!;
    await h.services.checkpoints.rollbackCurrent('ws', orphanRecord.id, 1);
    const current = (await h.services.checkpoints.current('ws'))!.workspaceRevision;
    await h.services.archive.flipCurrent('ws', current);
    const victimArchive = await readTree(h.services.archive.paths('victim').dir);
    const snapshots = await readTree(h.config.paths.snapshotRoot).catch(() => ({}));

    const { dry, real, warnings } = await gc(h, 'unattached');
    expect(await readTree(h.services.archive.paths('victim').dir).catch(() => ({}))).toEqual(victimArchive);
    expect(await readTree(h.config.paths.snapshotRoot).catch(() => ({}))).toEqual(snapshots);
    expect(await readFile(path.join(h.live('victim'), 'private.txt'), 'utf8')).toBe('victim data');
    expect(dry.items.map((i) => i.id)).toEqual([orphan]);
    expect(real.items.map((i) => i.id)).toEqual([orphan]);
    expect(await h.services.archive.revisions('ws')).not.toContain(orphan);
    expect(real.skipped).toBe(3);
    expect(real.invalidIds.map((i) => [i.field, i.value]).sort()).toEqual([
      ['revision', '../../victim'],
      ['snapshotId', '..'],
      ['workspaceId', 'a/b'],
    ]);
    expect(warnings.map((w) => w.value).sort()).toEqual(['..', '../../victim', 'a/b']);
  });

  it("retention: an attached record whose revision is ../../victim is skipped, never removed", async () => {
    const { h } = await twoWorkspaces();
    const planted = await h.services.checkpoints.record({ workspaceId: 'ws', generation: 1, kind: 'portable_workspace', workspaceRevision: '../../victim' }, LONG_AGO);
    await h.services.redis.zadd(h.services.keys.attached('ws'), 0, planted.id);
    const before = await readTree(h.services.archive.paths('victim').dir);

    const { real, warnings } = await gc(h, 'retention');
    expect(await readTree(h.services.archive.paths('victim').dir).catch(() => ({}))).toEqual(before);
    expect(await h.services.checkpoints.get('ws', planted.id)).not.toBeNull();
    expect(real.invalidIds).toEqual([{ field: 'revision', value: '../../victim', reason: expect.stringContaining('revision id') }]);
    expect(warnings).toHaveLength(1);
  });

  it("bases: a registered base snapshot '..' is never deleted (it would be the fleet home)", async () => {
    const { h } = await twoWorkspaces();
    await mkdir(path.join(h.config.paths.snapshotRoot, 'old-base', 'tree'), { recursive: true });
    await writeFile(path.join(h.config.paths.snapshotRoot, 'old-base', 'tree', 'f'), 'old');
    for (const snapshotId of ['..', '.', 'old-base']) {
      await h.services.bases.register({ provider: 'local', snapshotId, version: snapshotId, manifestHash: `h${snapshotId}`, name: 'b', runtime: 'node22', lane: 'default', status: 'ready', sourceSandboxId: null, error: null, createdAt: LONG_AGO, readyAt: LONG_AGO, expiresAt: null });
    }
    const before = await homeTree(h);

    const { real, warnings } = await gc(h, 'bases');
    const after = await homeTree(h).catch(() => ({}));
    // Only the valid old base went.
    expect(Object.keys(before).filter((k) => !(k in after))).toEqual(['snapshots/old-base', 'snapshots/old-base/tree', 'snapshots/old-base/tree/f']);
    expect(real.items.map((i) => i.id)).toEqual(['old-base']);
    expect(real.invalidIds.map((i) => i.value).sort()).toEqual(['.', '..']);
    expect(warnings).toHaveLength(2);
    expect((await h.services.bases.get('..'))?.status).toBe('ready');
  });

  it("orphans: a sandbox record carrying another workspace's handle is skipped; the victim's live sandbox stays", async () => {
    const { h, victim } = await twoWorkspaces();
    const planted = livePaths(h.config.paths.liveRoot, 'x');
    await mkdir(planted.meta, { recursive: true });
    await writeFile(planted.sandbox, JSON.stringify({ handle: victim.handle, workspaceId: 'x', generation: 1, hostId: h.config.hostId, state: 'running', createdAt: LONG_AGO }));
    const before = await readTree(h.live('victim'));

    const { real, warnings } = await gc(h, 'orphans');
    expect(await readTree(h.live('victim')).catch(() => ({}))).toEqual(before);
    expect(await h.services.providers.get('local').get(victim.handle, signal())).toMatchObject({ workspaceId: 'victim' });
    expect(real.items).toEqual([]);
    expect(real.invalidIds).toEqual([{ field: 'handle', value: victim.handle, reason: 'must name an incarnation of workspace x' }]);
    expect(warnings).toHaveLength(1);
  });
});
