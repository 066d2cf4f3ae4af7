// The stat cache across a worker restart, through the Procfile's worker process: persists write
// the cache as a snapshot and then one log line per revision; a new worker process reads the
// chain back, and its first persist takes the untouched directories by id (the facts and
// directory identities came through the log). Without the log the same persist walks everything,
// and either way the committed root is what a full walk of the live tree finds.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreBuilder } from '../../src/archive/store-builder.js';
import { statCacheLog } from '../../src/archive/stat-cache.js';
import { livePaths } from '../../src/providers/local/live-paths.js';
import type { PersistResult } from '../../src/queues/persist.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { killGroup, startFleet } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';

const TOP = 6;

// A persist enqueued the way an app pod does, answered by the worker process.
async function persist(h: Harness, turn: number): Promise<PersistResult> {
  const address = (await h.services.addresses.get('ws'))!;
  const { seq } = await h.services.client.persist({ workspaceId: 'ws', generation: address.generation, delete: true, reason: 'turn-end', turnId: `t${turn}` });
  const status = await waitFor('the persist to be acknowledged', async () => {
    const s = await h.services.intents.status('ws');
    return s.completedSeq >= seq ? s : undefined;
  }, 60_000);
  return status.result as PersistResult;
}

async function fullWalkRoot(h: Harness): Promise<string> {
  const src = await DirHandle.open(h.live('ws'));
  try {
    return await new StoreBuilder({ store: h.services.archive.objects, basis: null, cache: null, keepMissing: false, limits: h.config.treeLimits, signal: AbortSignal.timeout(60_000) }).build(src);
  } finally {
    await src.close();
  }
}

async function committedRoot(h: Harness): Promise<string> {
  const current = (await h.services.archive.current('ws'))!;
  return (await h.services.archive.readRecord('ws', current))!.root;
}

describe('the stat cache across a worker restart', () => {
  it.each([
    ['the snapshot and its log', true],
    ['the snapshot alone (its log lost)', false],
  ])('a new worker reads %s', { timeout: 180_000 }, async (_what, keepLog) => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const root = h.live('ws');
    for (let t = 0; t < TOP; t++) {
      await mkdir(path.join(root, `top${t}`, 'sub'), { recursive: true });
      for (let f = 0; f < 5; f++) await writeFile(path.join(root, `top${t}`, 'sub', `f${f}.txt`), `top${t} f${f}`);
    }
    // Past the racily-clean margin of what was planted (a younger entry is looked at again).
    const planted = Date.now();
    await waitFor('the clock to pass the planted tree', () => (Date.now() > planted + 1_100 ? true : undefined), 10_000);
    let worker = startFleet(['worker', '--queues', 'persist'], h.env);
    await worker.waitForOutput('serving');
    expect((await persist(h, 1)).reusedDirectories ?? 0).toBe(0);
    for (let turn = 2; turn <= 3; turn++) {
      await writeFile(path.join(root, 'top0', 'sub', 'f0.txt'), `turn ${turn}`);
      await persist(h, turn);
    }
    const cacheFile = path.join(livePaths(h.config.paths.liveRoot, 'ws').meta, 'stat-cache.json');
    // The worker's stop writes what it holds: the first revision's snapshot, then a line for each later one.
    killGroup(worker.child, 'SIGTERM');
    await worker.exited;
    const current = (await h.services.archive.current('ws'))!;
    const lines = (await readFile(statCacheLog(cacheFile), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { revision: string });
    expect(JSON.parse(await readFile(cacheFile, 'utf8')).revision).not.toBe(current);
    expect(lines.at(-1)!.revision).toBe(current);
    if (!keepLog) await rm(statCacheLog(cacheFile));

    await writeFile(path.join(root, 'top1', 'sub', 'f1.txt'), 'after the restart');
    worker = startFleet(['worker', '--queues', 'persist'], h.env);
    await worker.waitForOutput('serving');
    const after = await persist(h, 4);
    killGroup(worker.child, 'SIGTERM');
    await worker.exited;
    // With the log the untouched top directories are taken by id; without it every directory is walked.
    if (keepLog) expect(after.reusedDirectories ?? 0).toBeGreaterThanOrEqual(TOP - 2);
    else expect(after.reusedDirectories ?? 0).toBe(0);
    expect(await committedRoot(h)).toBe(await fullWalkRoot(h));
  });
});
