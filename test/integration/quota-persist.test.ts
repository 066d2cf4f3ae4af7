// A persist never refuses for quota (data first): a workspace that grows past its limit is
// archived in full and marked over quota (the set, the metric, a warning); back under, unmarked.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testWorkers } from '../helpers/fleet-harness.js';
import { answer, createWebHarness } from '../helpers/web-harness.js';

describe('quota: persist marks, never refuses', () => {
  it('a persist past FLEET_WORKSPACE_QUOTA_FILES commits everything and marks the workspace; a smaller tree unmarks it', async () => {
    const h = await createWebHarness({ FLEET_WORKSPACE_QUOTA_FILES: '3', FLEET_WORKSPACE_QUOTA_BYTES: '1000000' });
    await testWorkers(h.config, ['provision', 'persist']);
    expect((await answer(h.request('/v1/workspaces/ws-q/provision?wait=true', { json: {} }))).status).toBe(200);
    await h.write('ws-q', { a: '1', b: '2', c: '3', d: '4', e: '5' });
    const over = await answer(h.request('/v1/workspaces/ws-q/persist?wait=true', { json: { generation: 1, delete: true, reason: 'turn-end' } }));
    expect(over).toMatchObject({ status: 200, body: { result: { files: 5 } } });
    expect(await h.services.quota.over()).toEqual(['ws-q']);
    expect(await h.services.quota.usage('ws-q')).toMatchObject({ files: 5, bytes: 5 });
    expect(await (await h.request('/metrics')).text()).toMatch(/^fleet_workspaces_over_quota 1$/m);

    for (const name of ['d', 'e']) await rm(path.join(h.live('ws-q'), name));
    const under = await answer(h.request('/v1/workspaces/ws-q/persist?wait=true', { json: { generation: 1, delete: true, reason: 'turn-end' } }));
    expect(under.body.result).toMatchObject({ files: 3 });
    expect(await h.services.quota.over()).toEqual([]);
    expect(await (await h.request('/metrics')).text()).toMatch(/^fleet_workspaces_over_quota 0$/m);
  });

  it('a write through the API past the byte quota is refused (507) and nothing is written; a shrinking write passes', async () => {
    const h = await createWebHarness({ FLEET_WORKSPACE_QUOTA_BYTES: '100' });
    await testWorkers(h.config, ['provision', 'persist']);
    expect((await answer(h.request('/v1/workspaces/ws-w/provision?wait=true', { json: {} }))).status).toBe(200);
    const put = (file: string, size: number) => answer(h.request(`/v1/workspaces/ws-w/files/${file}`, { method: 'PUT', body: Buffer.alloc(size, 97) }));
    expect((await put('a.bin', 60)).status).toBe(200);
    const refused = await put('b.bin', 60);
    expect(refused).toMatchObject({ status: 507, body: { error: { code: 'QuotaExceeded', retryable: false } } });
    expect(refused.body.error.message).toContain('120 bytes, above its quota of 100');
    expect((await h.request('/v1/workspaces/ws-w/files/b.bin')).status).toBe(404);
    // Replacing a.bin with a smaller file shrinks the usage: allowed, and then b.bin fits.
    expect((await put('a.bin', 10)).status).toBe(200);
    expect((await put('b.bin', 60)).status).toBe(200);
    expect(await h.services.quota.usage('ws-w')).toMatchObject({ bytes: 70, files: 2 });
  });
});
