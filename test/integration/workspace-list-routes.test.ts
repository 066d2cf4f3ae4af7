// GET /v1/workspaces (cursor-paged by id) and DELETE /v1/workspaces/{id}?confirm=true (reset).
import { describe, expect, it } from 'vitest';
import { testWorkers } from '../helpers/fleet-harness.js';
import { answer, createWebHarness } from '../helpers/web-harness.js';

describe('the workspaces collection', () => {
  it('lists known workspaces a page at a time; resets one only with confirm=true', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['provision', 'persist']);
    for (const ws of ['ws-c', 'ws-a', 'ws-b']) expect((await answer(h.request(`/v1/workspaces/${ws}/provision?wait=true`, { json: {} }))).status).toBe(200);
    const first = await answer(h.request('/v1/workspaces?limit=2'));
    expect(first.body.workspaces.map((w: { workspaceId: string }) => w.workspaceId)).toEqual(['ws-a', 'ws-b']);
    expect(first.body.workspaces[0]).toMatchObject({ generation: 1, address: { hostId: 'local', provider: 'local' }, lastActivity: expect.stringMatching(/Z$/) });
    expect(first.body.nextCursor).toBe('ws-b');
    const second = await answer(h.request(`/v1/workspaces?limit=2&cursor=${first.body.nextCursor}`));
    expect(second.body).toMatchObject({ workspaces: [{ workspaceId: 'ws-c' }], nextCursor: null });
    expect(await answer(h.request('/v1/workspaces?limit=0'))).toMatchObject({ status: 400, body: { error: { field: 'limit' } } });
    expect(await answer(h.request('/v1/workspaces?cursor=bad%20id'))).toMatchObject({ status: 400, body: { error: { field: 'cursor' } } });

    expect(await answer(h.request('/v1/workspaces/ws-b', { method: 'DELETE' }))).toMatchObject({ status: 400, body: { error: { field: 'confirm' } } });
    expect(await h.services.addresses.get('ws-b')).not.toBeNull();
    const reset = await answer(h.request('/v1/workspaces/ws-b?confirm=true', { method: 'DELETE' }));
    expect(reset).toMatchObject({ status: 200, body: { workspaceId: 'ws-b', generation: 2, destroyed: expect.any(String) } });
    expect(await h.services.addresses.get('ws-b')).toBeNull();
  });
});
