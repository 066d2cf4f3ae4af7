// The persist status waiters read: its sequence numbers only ever move forward.
import { describe, expect, it } from 'vitest';
import { createHarness } from '../helpers/workspace-harness.js';

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
