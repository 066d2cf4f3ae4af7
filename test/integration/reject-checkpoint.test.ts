// Rejecting the checkpoint of a failed turn over HTTP and through the client (issue 19.11):
// fenced, a no-op once something newer decided, and it answers what is current now.
import { describe, expect, it } from 'vitest';
import { answer, createWebHarness } from '../helpers/web-harness.js';

const signal = () => AbortSignal.timeout(30_000);

describe('checkpoint rejection', () => {
  it('19.11: the app rejects the checkpoint of a failed turn (HTTP and client): fenced, a no-op when something newer decided, answers what is current', async () => {
    const h = await createWebHarness();
    const first = await h.provision('ws');
    await h.write('ws', { 'notes.md': 'turn 1' });
    const settled = await h.persist('ws', { reason: 'turn-end', turnId: 't1' });
    // Turn 2: a checkpoint is attached mid-turn, then the turn fails.
    await h.write('ws', { 'notes.md': 'turn 2, half done' });
    const midTurn = await h.persist('ws', { reason: 'checkpoint', delete: false });
    expect((await h.services.checkpoints.current('ws'))?.workspaceRevision).toBe(midTurn.revision);

    const reject = (json: Record<string, unknown>) => answer(h.request('/v1/workspaces/ws/checkpoints/reject', { json }));
    const done = await reject({ generation: first.generation, revision: midTurn.revision });
    expect(done).toMatchObject({ status: 200, body: { workspaceId: 'ws', rejected: true, current: { revision: settled.revision, turnId: 't1', reason: 'turn-end' } } });
    expect(await h.services.archive.current('ws')).toBe(settled.revision);
    // Again: something newer (this rejection) already decided; nothing changes, the answer is the same.
    expect(await reject({ generation: first.generation, revision: midTurn.revision })).toMatchObject({ status: 200, body: { rejected: false, current: { revision: settled.revision } } });
    expect(await reject({ generation: first.generation + 5, revision: settled.revision })).toMatchObject({ status: 409, body: { error: { code: 'StaleGeneration' } } });
    expect(await reject({ generation: first.generation, revision: 'r20200101T000000000Z-g1-nope00' })).toMatchObject({ status: 404, body: { error: { code: 'CheckpointNotFound' } } });
    expect(await reject({ generation: first.generation })).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid' } } });

    // The client, by checkpoint id.
    await h.write('ws', { 'notes.md': 'turn 3, failed' });
    const third = await h.persist('ws', { reason: 'turn-end', turnId: 't3' });
    const record = (await h.services.checkpoints.byRevision('ws', 'portable_workspace', third.revision!))!;
    const byClient = await h.services.client.rejectCheckpoint({ workspaceId: 'ws', generation: first.generation, checkpointId: record.id });
    expect(byClient).toMatchObject({ rejected: true, checkpointId: record.id, current: { revision: settled.revision } });

    // A rebuild restores what is current: the settled turn.
    await h.services.providers.get('local').destroy(first.handle, signal());
    expect(await h.provision('ws')).toMatchObject({ outcome: 'restored', source: settled.revision });
  });
});
