// Base retention as an operator meets it (a running `fleet up` and the CLI), for the local
// provider and for Vercel (the real SDK against the loopback stand-in): retention counts from the
// moment a base stopped being active or the rollback target; a base rotated out 13 days ago is
// kept and one rotated out 15 days ago is deleted, at the provider too, only by the explicit
// `fleet gc --kind bases`, its archived files' record with it; a plain `fleet gc` and the schedule
// (a dry run) delete no base.
import { access, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { ArchiveStore } from '../../src/archive/archive-store.js';
import { loadConfig } from '../../src/config.js';
import { fleetKeys } from '../../src/keys.js';
import type { BaseEntry } from '../../src/state/base-registry.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir, testConnection } from '../helpers/fleet-env.js';
import { providerTestEnv, startFleetUp } from '../helpers/fleet-up.js';
import { cliJson, runFleet } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const DAY = 86_400_000;

interface GcRun {
  readonly results: { kind: string; items: { id: string; description: string }[] }[];
}

async function checkRetention(env: Record<string, string>, snapshotExists: (id: string) => Promise<boolean>) {
  const archived = new ArchiveStore(loadConfig(env).paths.archiveRoot).bases;
  await startFleetUp(env);
  const ok = async <T,>(args: string[]): Promise<T> => {
    const result = await runFleet([...args, '--json'], env);
    expect(result.code, `fleet ${args.join(' ')}: ${result.stdout} ${result.stderr}`).toBe(0);
    return cliJson(result.stdout) as T;
  };
  const dir = await tempDir('base-retention');
  const ids: string[] = [];
  for (const name of ['a', 'b', 'c', 'd']) {
    const file = path.join(dir, `${name}.json`);
    await writeFile(file, JSON.stringify({ schemaVersion: 1, name: `base-${name}`, runtime: 'node22', setup: [`echo ${name} > which.txt`], smoke: ['test -f which.txt'] }));
    ids.push((await ok<{ snapshotId: string }>(['bake', file, '--activate', '--wait'])).snapshotId);
  }
  const [a, b, c, d] = ids as [string, string, string, string];
  const entry = async (id: string) => (await ok<{ bases: BaseEntry[] }>(['base', 'list'])).bases.find((e) => e.snapshotId === id)!;
  // d is active, c its rollback target; a and b rotated out when c and d were activated.
  expect(await entry(d)).toMatchObject({ active: true, previousSnapshotId: c, rotatedAt: null });
  expect((await entry(a)).rotatedAt).toEqual(expect.any(Number));
  expect((await entry(b)).rotatedAt).toEqual(expect.any(Number));

  // The lane view: d active, c its rollback target, no candidates; a workspace started from d counts as its reference.
  await ok(['provision', 'from-d', '--wait']);
  const view = await ok<{ lanes: { active: string; previous: string; candidates: string[] }[]; bases: { snapshotId: string; references: number; sinceRotationMs: number | null }[] }>(['base', 'list']);
  expect(view.lanes).toEqual([expect.objectContaining({ active: d, previous: c, candidates: [] })]);
  expect(view.bases.find((x) => x.snapshotId === d)).toMatchObject({ references: 1, sinceRotationMs: null });
  expect(view.bases.find((x) => x.snapshotId === a)?.sinceRotationMs).toEqual(expect.any(Number));

  // Backdated instead of waiting: all created 30 days ago; a rotated out 15 days ago, b 13.
  const config = loadConfig(env);
  const redis = testConnection(config);
  const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
  for (const id of ids) await redis.hset(keys.base(id), 'createdAt', String(Date.now() - 30 * DAY));
  await redis.hset(keys.base(a), 'rotatedAt', String(Date.now() - 15 * DAY));
  await redis.hset(keys.base(b), 'rotatedAt', String(Date.now() - 13 * DAY));

  // The schedule of `bases` is a dry run.
  const gcQueue = new Queue('gc', { connection: redis, prefix: keys.queuePrefix('gc') });
  addCleanup(() => gcQueue.close());
  const scheduler = await waitFor('the gc:bases scheduler', () => gcQueue.getJobScheduler('gc:bases'));
  expect(scheduler.template?.data).toMatchObject({ kind: 'bases', dryRun: true });

  // A plain `fleet gc` leaves bases alone; its dry run lists a.
  const plain = await ok<GcRun>(['gc']);
  expect(plain.results.map((r) => r.kind)).not.toContain('bases');
  const listed = await ok<GcRun>(['gc', '--dry-run']);
  expect(listed.results.find((r) => r.kind === 'bases')!.items.map((i) => i.id)).toEqual([a]);
  expect((await entry(a)).status).toBe('ready');
  expect(await snapshotExists(a)).toBe(true);
  // Every bake archived its base's files (archive/base-roots.ts).
  expect(await archived.list()).toEqual([...ids].sort());

  // The explicit task deletes a (at the provider too) and keeps b, c, d.
  const retired = await ok<GcRun>(['gc', '--kind', 'bases']);
  expect(retired.results[0]!.items.map((i) => i.id)).toEqual([a]);
  expect((await entry(a)).status).toBe('retired');
  expect(await snapshotExists(a)).toBe(false);
  // Its archived files are no longer a root of the objects GC.
  expect(await archived.list()).toEqual([b, c, d].sort());
  for (const id of [b, c, d]) {
    expect((await entry(id)).status).toBe('ready');
    expect(await snapshotExists(id)).toBe(true);
  }
}

describe.each(['local', 'vercel'] as const)('base retention counts from rotation and deletes only when asked (%s)', (provider) => {
  it('keeps a base rotated out 13 days ago, deletes one rotated out 15 days ago only by the explicit task', { timeout: 240_000 }, async () => {
    const { env, standin } = await providerTestEnv(provider);
    const snapshotRoot = loadConfig(env).paths.snapshotRoot;
    await checkRetention(env, async (id) => {
      if (!standin) return access(path.join(snapshotRoot, id)).then(() => true, () => false);
      return standin.state.snapshots.get(id)?.status === 'created';
    });
  });
});
