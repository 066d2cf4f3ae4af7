// GET /v1/jobs/{queue}/{id}: what an enqueue answered, looked up later: state, result, or the
// worker's failure as { code, message, retryable }; bad queue names and ids are 400, unknown 404.
import { describe, expect, it } from 'vitest';
import { testWorkers } from '../helpers/fleet-harness.js';
import { waitFor } from '../helpers/wait.js';
import { answer, createWebHarness } from '../helpers/web-harness.js';

describe('GET /v1/jobs/{queue}/{id}', () => {
  it('answers a completed job with its result and a failed one with its typed failure', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['provision', 'persist']);
    const queued = await answer(h.request('/v1/workspaces/ws-j/provision', { json: {} }));
    const done = await waitFor('the provision job completed', async () => {
      const view = await answer(h.request(`/v1/jobs/${queued.body.queue}/${encodeURIComponent(queued.body.jobId)}`));
      return view.body.state === 'completed' ? view : undefined;
    });
    expect(done.body).toMatchObject({ queue: 'provision', name: expect.any(String), result: { workspaceId: 'ws-j', generation: 1 }, failure: null, finishedAt: expect.stringMatching(/Z$/) });

    // The HTTP edge would refuse a stale generation at once; through the client it fails in the worker.
    const stale = await h.services.client.persist({ workspaceId: 'ws-j', generation: 7, reason: 'turn-end' });
    const failed = await waitFor('the stale persist failed', async () => {
      const view = await answer(h.request(`/v1/jobs/${stale.queue}/${encodeURIComponent(stale.jobId)}`));
      return view.body.state === 'failed' ? view : undefined;
    });
    expect(failed.body.failure).toMatchObject({ code: 'StaleGeneration', retryable: false, message: expect.stringContaining('ws-j') });

    expect(await answer(h.request('/v1/jobs/nope/1'))).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid', field: 'queue' } } });
    expect(await answer(h.request('/v1/jobs/gc/bad%20id'))).toMatchObject({ status: 400, body: { error: { field: 'jobId' } } });
    expect(await answer(h.request('/v1/jobs/gc/424242'))).toMatchObject({ status: 404, body: { error: { code: 'JobNotFound' } } });
  });
});
