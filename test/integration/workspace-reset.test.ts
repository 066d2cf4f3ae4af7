// `fleet workspace reset` removes every record of a workspace in one fenced step and keeps only
// what must never go back: the generation counter and the request counter.
import { describe, expect, it } from 'vitest';
import { indexSize } from '../helpers/bucket-reads.js';
import { resetWorkspace } from '../../src/provision/reset-workspace.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';

const signal = () => AbortSignal.timeout(30_000);
const request = { delete: true, force: false, reason: 'turn-end' as const, generation: 1 };

// Every key of the workspace's own namespace.
async function workspaceKeys(h: Harness, workspaceId: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await h.services.redis.scan(cursor, 'MATCH', `${namespace(h, workspaceId)}*`, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  // The sandbox uid stays the workspace's across a reset (uids are never reused; sandbox-uid-store.ts).
  return found.map((key) => key.slice(namespace(h, workspaceId).length)).filter((name) => name !== 'sandbox-uid').sort();
}

// `<the workspace's tag>:ws:<id>:`, in any key layout.
const namespace = (h: Harness, workspaceId: string) => h.services.keys.generation(workspaceId).slice(0, -'gen'.length);

describe('workspace reset', () => {
  it('19.6: reset removes every record of the workspace in one step, attach counter included, and never resets the request counter', async () => {
    const h = await createHarness();
    await h.provision('ws');
    for (const turn of ['one', 'two']) {
      await h.write('ws', { 'turn.txt': turn });
      await h.persist('ws');
    }
    const lastSeq = await h.services.intents.merge('ws', request);
    const checkpoints = await h.services.checkpoints.history('ws');
    expect(await workspaceKeys(h, 'ws')).toContain('attach-seq');

    const reset = await resetWorkspace(h.services, 'ws', signal());
    expect(reset.generation).toBe(2);
    // Only the generation counter and the persist status (holding nothing but lastSeq) are left.
    expect(await workspaceKeys(h, 'ws')).toEqual(['gen', 'persist-status']);
    expect(await h.services.redis.hgetall(h.services.keys.persistStatus('ws'))).toEqual({ lastSeq: String(lastSeq) });
    for (const c of checkpoints) expect(await h.services.checkpoints.get('ws', c.id)).toBeNull();
    expect(await indexSize(h.services.redis, h.services.keys, 'unattached')).toBe(0);
    // A request after the reset gets a new sequence number, never one a waiter already saw.
    expect(await h.services.intents.merge('ws', request)).toBe(lastSeq + 1);
    expect((await h.provision('ws')).generation).toBe(3);
  });

  it('19.6: the record removal is refused unless the generation and the checkpoint list are what the reset read', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'a' });
    await h.persist('ws');
    const generation = await h.services.addresses.bumpGeneration('ws', 0);
    const ids = await h.services.resets.checkpointIds('ws');
    // A stale incarnation records one more (unattached) checkpoint after the list was read.
    await h.services.checkpoints.record({ workspaceId: 'ws', generation: 1, kind: 'portable_workspace', workspaceRevision: 'r20260101T000000000Z-g1-late00' });
    expect(await h.services.resets.removeRecords('ws', generation, ids)).toEqual({ reset: false, reason: 'checkpoints-changed' });
    expect(await h.services.resets.removeRecords('ws', generation - 1, await h.services.resets.checkpointIds('ws'))).toEqual({ reset: false, reason: 'generation-moved' });
    // Nothing was removed by the refused attempts.
    expect(await h.services.addresses.get('ws')).not.toBeNull();
    expect(await h.services.checkpoints.history('ws')).toHaveLength(2);
    expect(await h.services.resets.removeRecords('ws', generation, await h.services.resets.checkpointIds('ws'))).toEqual({ reset: true });
    expect(await workspaceKeys(h, 'ws')).toEqual(['gen']);
  });
});
