// Mid-turn checkpoints through a running `fleet up`, local and Vercel (the real SDK against the
// loopback stand-in): a checkpoint takes the live tree exactly, so the revision a host loss
// restores is a state the tree really had (deletions and renames included), not the union of
// every state since the last turn end.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir, testEnv } from '../helpers/fleet-env.js';
import { runFleet, startFleet, cliJson, fleetJson } from '../helpers/processes.js';
import { readTree } from '../helpers/tree.js';
import { VercelStandin } from '../helpers/vercel-standin/vercel-standin.js';
import { standinEnv } from '../helpers/vercel-standin/standin-env.js';
import { waitFor } from '../helpers/wait.js';

interface HistoryRow {
  readonly revision: string;
  readonly reason: string;
}

async function checkpointsTakeDeletions(extraEnv: Record<string, string>) {
  const env = await testEnv({ ...extraEnv, FLEET_HTTP_PORT: '0', FLEET_CHECKPOINT_INTERVAL_MS: '1000', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
  const fleet = (args: string[]) => runFleet(args, env);
  const json = fleetJson(env);
  const up = startFleet(['up'], env);
  await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
  await json(['provision', 'agent', '--wait']);
  const exec = async (script: string) => expect(await fleet(['exec', 'agent', '--', 'sh', '-c', script])).toMatchObject({ code: 0 });
  await exec('mkdir -p sub && echo keep > keep.txt && echo gone > gone.txt && echo moved > sub/moved.txt');
  const turn = await json<{ result: { revision: string } }>(['persist', 'agent', '--delete', '--reason', 'turn-end', '--wait', '--timeout', '60000']);
  // Mid-turn: a delete, a rename across directories and a new file; then a checkpoint tick.
  await exec('rm gone.txt && mv sub/moved.txt moved.txt && echo new > new.txt');
  const checkpoint = await waitFor(
    'a checkpoint revision after the turn end',
    async () => {
      const { revisions } = await json<{ revisions: HistoryRow[] }>(['history', 'agent']);
      const newer = revisions.findIndex((r) => r.revision === turn.result.revision);
      return revisions.slice(0, Math.max(0, newer)).find((r) => r.reason === 'checkpoint');
    },
    60_000,
    200,
  );
  const out = path.join(await tempDir('checkpoint-export'), 'tree');
  await json(['export', 'agent', '--revision', checkpoint.revision, '--to', out]);
  const tree = await readTree(out);
  expect(Object.keys(tree).sort()).toEqual(['keep.txt', 'moved.txt', 'new.txt', 'sub']);
  expect(Buffer.from(tree['moved.txt']!, 'base64').toString()).toBe('moved\n');
  // A checkpoint of a tree that holds still settles at once: two walks (or listings) agree.
  await exec('echo more > more.txt');
  const settled = await json<{ result: { pointInTime?: boolean; unchanged: boolean } }>(['persist', 'agent', '--reason', 'checkpoint', '--wait', '--timeout', '60000']);
  expect(settled.result.pointInTime, JSON.stringify(settled.result)).toBe(true);
}

describe('checkpoints through a running fleet', () => {
  it('local: a mid-turn checkpoint revision is the live tree exactly (deleted and renamed files are not kept)', { timeout: 180_000 }, async () => {
    await checkpointsTakeDeletions({});
  });

  it('vercel: a mid-turn checkpoint revision is the sandbox tree exactly', { timeout: 180_000 }, async () => {
    const standin = await VercelStandin.start();
    addCleanup(() => standin.close());
    await checkpointsTakeDeletions(standinEnv(standin));
  });
});
