// A persist job whose request a run already covered (the `keepLastIfActive` follow-up of a turn
// end that a checkpoint's run took with it) runs once more, with the real processor and a real
// archive: as an exact persist that settles, never a single-walk reconcile, because its agent may
// be writing again (loss-window run X: such a re-run mixed two moments of a live tree).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { persistProcessorDeps } from '../../src/app/build-processors.js';
import { createLogger } from '../../src/logger.js';
import type { ProcessorContext } from '../../src/jobs/processor-context.js';
import type { PersistResult } from '../../src/queues/persist.js';
import { coveredRequest, persistProcessor } from '../../src/workers/processors/persist.js';
import { createHarness } from '../helpers/workspace-harness.js';

const ctx = (): ProcessorContext => ({
  logger: createLogger({ level: 'silent' }),
  signal: AbortSignal.timeout(60_000),
  queue: 'persist@local',
  jobId: 'covered-1',
  attempt: 1,
  maxAttempts: 3,
  deadlineAt: Date.now() + 60_000,
  progress: async () => undefined,
});

describe('a persist job whose request was already covered', () => {
  it('runs once more as a settled exact persist (pointInTime), not a single-walk turn end', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'alpha' });
    await h.persist('ws');
    await h.write('ws', { 'b.txt': 'beta' });
    const processor = persistProcessor(persistProcessorDeps(h.services));
    // A fleet-client turn end whose request id the intent no longer holds: covered by an earlier run.
    const payload = { workspaceId: 'ws', generation: 1, delete: true, force: false, reason: 'turn-end' as const, turnId: 't1', requestId: randomUUID() };
    expect(await h.services.intents.read('ws')).toBeNull();
    const result = (await processor(payload, ctx())) as PersistResult;
    expect(result).toMatchObject({ unchanged: false, files: 2, pointInTime: true });
    expect(coveredRequest(payload, 0)).toMatchObject({ delete: false, exact: true, reason: 'turn-end', turnId: 't1' });
    // An upload-only request stays upload-only.
    expect(coveredRequest({ ...payload, delete: false, reason: 'manual' }, 0)).toMatchObject({ delete: false, exact: false });
  });
});
