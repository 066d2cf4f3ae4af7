// A checkpoint of a tree being written is a state the tree really had: it walks again until two
// walks agree, and commits nothing (TreeChanged, retried) when they never do. The writer is a separate process, really
// concurrent with the walk: it replaces `a` then `b` with one counter, so every state it produces
// has b = a or b = a - 1. The pauses between its bursts come from a seeded stream
// (FLEET_POINT_IN_TIME_SEED replays them; the seed is in every assertion message).
//
// On Vercel a checkpoint commits only a tree it can show it had at one instant, and a file is taken only when the sandbox's second look, after the archive, still sees
// the version its listing named: a file replaced every few milliseconds is never taken (the
// revision keeps its previous version), so the writer there replaces them a few times a second.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { archivedText } from '../helpers/archived.js';
import { addCleanup } from '../helpers/cleanup.js';
import { rng, seedFrom } from '../helpers/rng.js';
import { waitFor } from '../helpers/wait.js';
import { createHarness } from '../helpers/workspace-harness.js';
import { vercelWorkspace } from '../helpers/vercel-workspace.js';
import type { PersistRequest } from '../../src/persist/persist-workspace.js';
import type { PersistResult } from '../../src/queues/persist.js';

const WRITER = `
const fs = require('node:fs');
const [dir, pauses, perBurst] = process.argv.slice(1);
const pausesMs = JSON.parse(pauses);
let n = 0;
let burstCount = 0;
const burst = () => {
  for (let i = 0; i < Number(perBurst); i++) {
    n += 1;
    // Whole files only (temporary, then rename): a truncated file is a state too, but not one this judge models.
    fs.writeFileSync(dir + '/d0/.a', String(n));
    fs.renameSync(dir + '/d0/.a', dir + '/d0/a');
    fs.writeFileSync(dir + '/d1/.b', String(n));
    fs.renameSync(dir + '/d1/.b', dir + '/d1/b');
  }
  setTimeout(burst, pausesMs[burstCount++ % pausesMs.length]);
};
burst();
`;

describe('checkpoints of a tree being written', () => {
  it('a quiet tree: two walks agree, the checkpoint is point-in-time', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'd0/a': '0', 'd1/b': '0' });
    await h.persist('ws');
    await h.write('ws', { 'd0/a': '1', 'd1/b': '1' });
    const checkpoint = await h.persist('ws', { delete: false, exact: true, reason: 'checkpoint' });
    expect(checkpoint).toMatchObject({ walks: 2, pointInTime: true, unchanged: false });
    // A turn-end persist walks once and says nothing about it.
    await h.write('ws', { 'd0/a': '2', 'd1/b': '2' });
    const turn = await h.persist('ws');
    expect(turn.walks).toBeUndefined();
    expect(turn.pointInTime).toBeUndefined();
  });

  it('under a concurrent writer, every checkpoint that commits is point-in-time and holds a state the writer produced', { timeout: 120_000 }, async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'd0/a': '0', 'd1/b': '0' });
    await h.persist('ws');
    await checkpointsUnderWriter({ live: h.live('ws'), perBurst: 20, pausesMs: [0, 150], checkpoints: 25, mustRefuse: true }, (options) => h.persist('ws', options), (rel, revision) => archivedText(h.services.archive, 'ws', rel, revision));
  });

  it('vercel: under a concurrent writer, every checkpoint that commits is point-in-time (a listing nothing changed under, or two that agree) and holds a state the writer produced', { timeout: 180_000 }, async () => {
    const ws = await vercelWorkspace('pit');
    await ws.sh('mkdir -p d0 d1 && printf 0 > d0/a && printf 0 > d1/b');
    await ws.persist();
    await checkpointsUnderWriter({ live: ws.live, perBurst: 1, pausesMs: [20, 400], checkpoints: 12 }, async (options) => (await ws.persist(options)).result, (rel, revision) => archivedText(ws.h.services.archive, ws.workspaceId, rel, revision));
  });

  it('vercel: a turn end taken while a writer goes on holds a state the writer produced, or says it is not point-in-time', { timeout: 180_000 }, async () => {
    const ws = await vercelWorkspace('pit-turn');
    await ws.sh('mkdir -p d0 d1 && printf 0 > d0/a && printf 0 > d1/b');
    await ws.persist();
    await checkpointsUnderWriter({ live: ws.live, perBurst: 1, pausesMs: [20, 400], checkpoints: 12, turnEnds: true }, async (options) => (await ws.persist(options)).result, (rel, revision) => archivedText(ws.h.services.archive, ws.workspaceId, rel, revision));
  });
});

interface WriterShape {
  readonly live: string;
  /** Pairs of replacements per burst, and the range of pauses between bursts (ms). */
  readonly perBurst: number;
  readonly pausesMs: readonly [number, number];
  /** Checkpoints that commit a revision to judge. */
  readonly checkpoints: number;
  /** Turn ends (reconciles) instead of checkpoints: they commit whatever happens, and say when they could not show one instant. */
  readonly turnEnds?: boolean;
  /** Some checkpoints must be refused (the writer is fast enough to get into walks). */
  readonly mustRefuse?: boolean;
}

// Runs the writer on `live` and takes checkpoints until enough of them committed a revision; each
// one that says it is point-in-time must hold a state the writer produced.
async function checkpointsUnderWriter({ live, perBurst, pausesMs: [minPause, maxPause], checkpoints, turnEnds = false, mustRefuse = false }: WriterShape, persist: (options: Partial<PersistRequest>) => Promise<PersistResult>, archived: (rel: string, revision: string) => Promise<string | null>): Promise<void> {
  const seed = seedFrom('FLEET_POINT_IN_TIME_SEED');
  const random = rng(seed);
  const pausesMs = Array.from({ length: 256 }, () => random.int(minPause, maxPause));
  const writer = spawn(process.execPath, ['-e', WRITER, live, JSON.stringify(pausesMs), String(perBurst)], { stdio: 'ignore' });
  addCleanup(() => {
    writer.kill('SIGKILL');
  });
  // The writer is running once it replaced `a`.
  await waitFor('the writer to start', async () => ((await readFile(path.join(live, 'd0', 'a'), 'utf8')) !== '0' ? true : undefined));
  const outcomes: { a: number; b: number }[] = [];
  let judged = 0;
  let refused = 0;
  // Until enough committed and, where the writer must get in the way, one was refused: on a loaded
  // machine the writer can miss every walk of a short streak (seen once in CI, seed 272).
  for (let i = 0; (outcomes.length < checkpoints || (mustRefuse && refused === 0)) && i < 2_000; i++) {
    // A checkpoint that cannot show one instant commits nothing (TreeChanged, retried).
    const request: Partial<PersistRequest> = turnEnds ? { delete: true, reason: 'turn-end' } : { delete: false, exact: true, reason: 'checkpoint' };
    const checkpoint = await persist(request).catch((error: unknown) => {
      if ((error as { code?: string }).code !== 'TreeChanged') throw error;
      refused += 1;
      return null;
    });
    if (checkpoint === null || checkpoint.unchanged) continue;
    const a = Number(await archived('d0/a', checkpoint.revision!));
    const b = Number(await archived('d1/b', checkpoint.revision!));
    outcomes.push({ a, b });
    if (turnEnds && checkpoint.pointInTime === false) continue;
    judged += 1;
    expect(checkpoint.pointInTime, `seed ${seed}, checkpoint ${i}: ${JSON.stringify(checkpoint)}`).toBe(turnEnds ? undefined : true);
    expect([a, a - 1], `seed ${seed}, checkpoint ${i}: a=${a} b=${b} ${JSON.stringify(checkpoint)}`).toContain(b);
  }
  writer.kill('SIGKILL');
  expect(outcomes.length, `seed ${seed}`).toBeGreaterThanOrEqual(checkpoints);
  // Turn ends that could not show one instant are not judged; most can.
  expect(judged, `seed ${seed}`).toBeGreaterThan(outcomes.length / 2);
  // The writer really got in the way: some checkpoints found no instant to commit.
  if (mustRefuse) expect(refused, `seed ${seed}: checkpoints refused (TreeChanged)`).toBeGreaterThan(0);
}
