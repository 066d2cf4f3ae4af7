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
