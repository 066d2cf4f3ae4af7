// A write(2) stalled mid-copy (test/fixtures/stalled-write.py) while persists run in the
// Procfile's worker process, enqueued the way an app pod does: a turn end and a checkpoint commit
// the file's whole previous version, never the half-written bytes both reads of it agree on, and
// the persist after the write ends takes the new one (src/tree/write-barrier.ts). Once the stalled
// write's ctime is over a second old, the file takes the one-trip path for settled files
// (src/archive/store-settled-file.ts): the barrier holds there too.
import { stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTLED_FILE_BYTES, SYNC_FILE_BYTES } from '../../src/archive/store-builder.js';
import type { PersistReason, PersistResult } from '../../src/queues/persist.js';
import { archivedNode } from '../helpers/archived.js';
import { killGroup, startFleet } from '../helpers/processes.js';
import { stallWrite } from '../helpers/stalled-writer.js';
import { waitFor } from '../helpers/wait.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';

const SIZE = 1 << 20;

async function persist(h: Harness, reason: PersistReason, turn: number): Promise<PersistResult> {
  const address = (await h.services.addresses.get('ws'))!;
  const { seq } = await h.services.client.persist({ workspaceId: 'ws', generation: address.generation, delete: reason === 'turn-end', reason, turnId: `t${turn}` });
  const status = await waitFor(`persist ${turn} to be acknowledged`, async () => {
    const s = await h.services.intents.status('ws');
    return s.completedSeq >= seq ? s : undefined;
  }, 60_000);
  return status.result as PersistResult;
}

async function archived(h: Harness): Promise<Buffer> {
  const node = await archivedNode(h.services.archive, 'ws', 'big.bin');
  if (node?.type !== 'file') throw new Error('big.bin is not archived as a file');
  return node.content;
}

describe('a write stalled mid-copy, through the worker process', () => {
  it('is never archived half-done', { timeout: 180_000 }, async () => {
    expect(SIZE).toBeGreaterThan(SYNC_FILE_BYTES);
    expect(SIZE).toBeLessThanOrEqual(SETTLED_FILE_BYTES);
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const file = path.join(h.live('ws'), 'big.bin');
    await writeFile(file, Buffer.alloc(SIZE, 'a'));
    const worker = startFleet(['worker', '--queues', 'persist,checkpoint'], h.env);
    try {
      await worker.waitForOutput('serving');
      await persist(h, 'turn-end', 1);
      expect((await archived(h)).equals(Buffer.alloc(SIZE, 'a'))).toBe(true);
      const writer = await stallWrite(file, 'b');
      try {
        for (const [turn, reason] of [[2, 'turn-end'], [3, 'checkpoint']] as const) {
          await persist(h, reason, turn);
          expect((await archived(h)).equals(Buffer.alloc(SIZE, 'a')), `${reason}: the whole version from before the write`).toBe(true);
        }
        // The write still stalled, its ctime (set as it began) over a second old: a settled file now.
        await waitFor('the stalled write to be over a second old', async () => (Date.now() - (await stat(file)).ctimeMs > 1_100 ? true : undefined), 30_000);
        await persist(h, 'checkpoint', 4);
        expect((await archived(h)).equals(Buffer.alloc(SIZE, 'a')), 'settled: the whole version from before the write').toBe(true);
        await writer.release();
      } finally {
        writer.kill();
      }
      const after = await persist(h, 'turn-end', 5);
      expect(after.changedFiles).toBe(1);
      expect((await archived(h)).equals(Buffer.alloc(SIZE, 'b'))).toBe(true);
    } finally {
      killGroup(worker.child, 'SIGTERM');
      await worker.exited;
    }
  });
});
