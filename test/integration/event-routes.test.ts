// GET /v1/events against real workers and the real Redis stream: what jobs did arrives as SSE
// messages (provisioned, persisted with the revision, a typed final failure, a reset), a client
// resumes after the id it last saw, is told when what came between was trimmed (lost), and sees
// only the workspaces and types it asked for and its token may see.
import { describe, expect, it } from 'vitest';
import { readEvents } from '../helpers/event-stream.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { answer, createWebHarness } from '../helpers/web-harness.js';

const FULL = 'full-token-0123456789abcdef';
const TEAM_A = 'team-a-token-0123456789abcdef';

describe('GET /v1/events', () => {
  it('streams what the workers did, resumes after Last-Event-ID, says lost when events were trimmed, filters by workspace, type and token', async () => {
    const h = await createWebHarness({ FLEET_API_TOKENS: `${FULL},${TEAM_A};scope=app;workspaces=team-a-*` });
    await testWorkers(h.config, ['provision', 'persist']);
    const events = (query = '', token = FULL, headers: Record<string, string> = {}) => h.request(`/v1/events${query}`, { token, headers });

    const all = readEvents(await events(), { sse: true });
    const teamA = readEvents(await events('', TEAM_A), { sse: true });
    const onlyPersisted = readEvents(await events('?types=persisted&workspaceId=team-a-1'), { sse: true });

    const provisioned = await answer(h.request('/v1/workspaces/team-a-1/provision?wait=true', { json: {}, token: FULL }));
    await h.write('team-a-1', { 'a.txt': 'one' });
    const persisted = await answer(h.request('/v1/workspaces/team-a-1/persist?wait=true', { json: { generation: provisioned.body.result.generation, delete: true, reason: 'turn-end', turnId: 't1' }, token: FULL }));
    expect(persisted.status).toBe(200);
    await answer(h.request('/v1/workspaces/other/provision?wait=true', { json: {}, token: FULL }));
    // A rollback to a revision the workspace never had fails for good in the worker.
    const rollback = await answer(h.request('/v1/workspaces/other/rollback', { json: { revision: 'r20200101T000000000Z-g1-aaaaaa' }, token: FULL }));
    expect(rollback.status).toBe(202);

    const first = await all.until((e) => e.type === 'provisioned');
    expect(first).toMatchObject({ sseEvent: 'provisioned', workspaceId: 'team-a-1', generation: 1, outcome: 'created-empty', at: expect.stringMatching(/Z$/) });
    expect(first.sseId).toBe(first.id);
    expect(await all.until((e) => e.type === 'persisted')).toMatchObject({ workspaceId: 'team-a-1', revision: persisted.body.result.revision, reason: 'turn-end', turnId: 't1', files: 1 });
    expect(await all.until((e) => e.type === 'provisioned')).toMatchObject({ workspaceId: 'other' });
    const failed = await all.until((e) => e.type === 'failed');
    expect(failed).toMatchObject({ workspaceId: 'other', queue: expect.stringMatching(/^persist@/), jobId: rollback.body.jobId, code: 'RevisionNotFound', retryable: false });

    const reset = await answer(h.request('/v1/workspaces/team-a-1?confirm=true', { method: 'DELETE', token: FULL }));
    expect(reset.status).toBe(200);
    expect(await all.until((e) => e.type === 'reset')).toMatchObject({ workspaceId: 'team-a-1', generation: reset.body.generation });

    // The workspace-limited token saw only its workspace; the filtered stream only the persist of it.
    expect((await teamA.until((e) => e.type === 'reset')).workspaceId).toBe('team-a-1');
    expect(teamA.seen.map((e) => e.workspaceId)).toEqual(teamA.seen.map(() => 'team-a-1'));
    expect(await onlyPersisted.until((e) => e.type === 'persisted')).toMatchObject({ workspaceId: 'team-a-1' });
    await Promise.all([all.cancel(), teamA.cancel(), onlyPersisted.cancel()]);

    // Resuming after the first event gives what came after it, in order, from the same ids.
    const resumed = readEvents(await events('', FULL, { 'last-event-id': first.id }), { sse: true });
    const again = await resumed.until((e) => e.type === 'reset');
    expect(resumed.seen.map((e) => e.id)).toEqual(all.seen.slice(all.seen.indexOf(first) + 1, all.seen.indexOf(all.seen.find((e) => e.type === 'reset')!) + 1).map((e) => e.id));
    expect(again.id).toBe(all.seen.find((e) => e.type === 'reset')!.id);
    await resumed.cancel();

    // Trim everything up to the failure: a client resuming from the first event is told it lost some.
    await h.services.redis.xtrim(h.services.keys.events(), 'MINID', failed.id);
    const late = readEvents(await events('', FULL, { 'last-event-id': first.id }), { sse: true });
    expect(await late.until(() => true)).toMatchObject({ type: 'lost', sseEvent: 'lost', after: first.id, oldest: failed.id });
    expect((await late.until(() => true)).id).toBe(failed.id);
    await late.cancel();

    expect(await answer(events('', FULL, { 'last-event-id': 'yesterday' }))).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid', field: 'Last-Event-ID' } } });
    expect(await answer(events('?types=provisioned,nope'))).toMatchObject({ status: 400, body: { error: { field: 'types' } } });
  });
});
