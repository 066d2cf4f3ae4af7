// The persist status waiters read: its sequence numbers only ever move forward.
import { EventEmitter } from 'node:events';
import type { QueueEvents } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { StaleGenerationError } from '../../src/errors/stale-generation-error.js';
import { waitForPersist } from '../../src/producers/wait-for-persist.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';

const request = { delete: false, force: false, reason: 'checkpoint' as const, generation: 1 };

describe('persist status', () => {
  it('19.5: failedSeq never moves backwards: a final failure reported with an older or unknown sequence keeps the newer one', async () => {
    const h = await createHarness();
    const { intents } = h.services;
    for (let i = 0; i < 3; i++) await intents.merge('ws', request);
    await intents.fail('ws', 3, 'RsyncFailed: exit 23', false);
    // A late report of an older request, and one of a job that never knew its sequence number (0).
    await intents.fail('ws', 2, 'NotReady: late', false);
    await intents.fail('ws', 0, 'Stalled: job stalled more than allowable limit', false);
    expect(await intents.status('ws')).toMatchObject({ failedSeq: 3, failedReason: 'RsyncFailed: exit 23' });
    // A newer failure still moves it forward.
    await intents.merge('ws', request);
    await intents.fail('ws', 4, 'ShrinkGuard: refused', true);
    expect(await intents.status('ws')).toMatchObject({ failedSeq: 4, failedReason: 'ShrinkGuard: refused' });
  });
});

describe('persist intent: keep-missing', () => {
  const upload = { delete: false, force: false, reason: 'manual' as const, generation: 1 };
  const reconcile = { delete: true, force: false, reason: 'turn-end' as const, generation: 1 };

  it('only checkpoints pending: neither delete nor keep (the run may take the tree exactly)', async () => {
    const h = await createHarness();
    const { intents } = h.services;
    await intents.merge('ws', request);
    await intents.merge('ws', request);
    expect(await intents.read('ws')).toMatchObject({ delete: false, keep: false, reason: 'checkpoint' });
  });

  it('an upload-only request of a caller pins keep until a run covers it, whatever checkpoint merges after it', async () => {
    const h = await createHarness();
    const { intents } = h.services;
    await intents.merge('ws', request);
    const pinned = await intents.merge('ws', upload);
    const later = await intents.merge('ws', request);
    expect(await intents.read('ws')).toMatchObject({ delete: false, keep: true, reason: 'checkpoint', seq: later });
    // A run that covered only up to the pinning request clears it; the newer checkpoint stays, unpinned.
    await intents.complete('ws', pinned, { ok: true });
    expect(await intents.read('ws')).toMatchObject({ delete: false, keep: false, seq: later });
    // A run that covered less than the pin leaves it.
    const again = await intents.merge('ws', upload);
    await intents.complete('ws', again - 1, { ok: true });
    expect(await intents.read('ws')).toMatchObject({ keep: true, seq: again });
  });

  it('a reconcile merged with a checkpoint stays a reconcile (G5)', async () => {
    const h = await createHarness();
    const { intents } = h.services;
    await intents.merge('ws', reconcile);
    await intents.merge('ws', request);
    expect(await intents.read('ws')).toMatchObject({ delete: true, keep: false, reason: 'checkpoint' });
  });
});

describe('persist waiters and generations', () => {
  // Waiters wake on queue events or a poll; these tests complete first, so the poll is never needed.
  const events = new EventEmitter() as unknown as QueueEvents;
  const wait = (h: Harness, seq: number, generation: number) => waitForPersist({ intents: h.services.intents, events, workspaceId: 'ws', seq, generation, queue: 'persist@local', jobId: 'j', timeoutMs: 5_000, pollMs: 50 });

  it('a request of a replaced incarnation that a run of the new one covered fails StaleGeneration (its tree was never persisted); requests of the new one are done', async () => {
    const h = await createHarness();
    const { intents } = h.services;
    const first = await intents.merge('ws', { ...request, generation: 8 });
    await intents.complete('ws', first, { revision: 'r8' }, undefined, 0, 8);
    await expect(wait(h, first, 8)).resolves.toEqual({ revision: 'r8' });
    // A turn end of incarnation 8, still pending when incarnation 9 (restored from the archive) persists.
    const turnEnd = await intents.merge('ws', { delete: true, force: false, reason: 'turn-end', turnId: 't95', generation: 8 });
    const checkpoint = await intents.merge('ws', { ...request, generation: 9 });
    await intents.complete('ws', checkpoint, { revision: 'r9' }, undefined, 0, 9);
    await expect(wait(h, turnEnd, 8)).rejects.toBeInstanceOf(StaleGenerationError);
    await expect(wait(h, turnEnd, 8)).rejects.toThrow(/generation 8 is stale \(current 9\)/);
    await expect(wait(h, checkpoint, 9)).resolves.toEqual({ revision: 'r9' });
    // The request that incarnation 8's own run covered stays done.
    await expect(wait(h, first, 8)).resolves.toEqual({ revision: 'r9' });
    expect((await intents.status('ws')).completedByGeneration).toEqual(new Map([[8, first], [9, checkpoint]]));
  });

  it('runs of a fleet that did not record generations: covered is done, as before', async () => {
    const h = await createHarness();
    const seq = await h.services.intents.merge('ws', { ...request, generation: 3 });
    await h.services.intents.complete('ws', seq, { ok: true });
    await expect(wait(h, seq, 2)).resolves.toEqual({ ok: true });
  });
});
