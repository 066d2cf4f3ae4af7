// Every success answer is typed: the harness checks each 2xx JSON body against its route's
// response schema (the one /openapi.json publishes), and timestamps are ISO 8601 everywhere.
import { describe, expect, it } from 'vitest';
import { testWorkers } from '../helpers/fleet-harness.js';
import { answer, createWebHarness } from '../helpers/web-harness.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('HTTP API: typed answers', () => {
  it('turns, describe, revisions and a file\'s history answer their schemas, with ISO 8601 timestamps', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['provision', 'persist']);
    expect((await answer(h.request('/v1/workspaces/ws-t/provision?wait=true', { json: {} }))).status).toBe(200);
    const opened = await answer(h.request('/v1/workspaces/ws-t/turns', { json: { action: 'open', turnId: 't-1' } }));
    expect(opened).toMatchObject({ status: 200, body: { workspaceId: 'ws-t', turnId: 't-1', open: true, expiresAt: expect.stringMatching(ISO) } });
    await h.write('ws-t', { 'a.txt': 'alpha' });
    expect((await answer(h.request('/v1/workspaces/ws-t/persist?wait=true', { json: { generation: 1, reason: 'turn-end', turnId: 't-1' } }))).status).toBe(200);
    const closed = await answer(h.request('/v1/workspaces/ws-t/turns', { json: { action: 'close', turnId: 't-1' } }));
    expect(closed.body).toMatchObject({ open: false, expiresAt: null, wasOpen: true });

    const view = await answer(h.request('/v1/workspaces/ws-t'));
    expect(view.status).toBe(200);
    expect(view.body.address.publishedAt).toMatch(ISO);
    expect(view.body.runtime.createdAt).toMatch(ISO);
    expect(view.body.runtime.updatedAt).toMatch(ISO);
    const revisions = await answer(h.request('/v1/workspaces/ws-t/revisions'));
    expect(revisions.body.revisions[0].createdAt).toMatch(ISO);
    const history = await answer(h.request('/v1/workspaces/ws-t/files/a.txt/history'));
    expect(history.body.revisions[0]).toMatchObject({ revision: revisions.body.revisions[0].revision, change: 'added', createdAt: expect.stringMatching(ISO) });
  });
});
