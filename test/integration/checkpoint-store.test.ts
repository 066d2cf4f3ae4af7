// The checkpoint store contract (seed 003) on Redis.
import { describe, expect, it } from 'vitest';
import { indexSize } from '../helpers/bucket-reads.js';
import { CheckpointStore, MAX_CHECKPOINT_COLLECT_LIMIT } from '../../src/state/checkpoint-store.js';
import { AddressStore } from '../../src/state/address-store.js';
import { fleetKeys } from '../../src/keys.js';
import { testConfig, testConnection } from '../helpers/fleet-env.js';
import { rejectsWith } from '../helpers/workspace-harness.js';

async function setup() {
  const { config } = await testConfig();
  const redis = testConnection(config);
  const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
  const store = new CheckpointStore(redis, keys);
  const addresses = new AddressStore(redis, keys);
  return { store, addresses, redis, keys };
}
const rev = (n: number) => `r20261130T10000000${n}Z-g1-aaaaa${n}`;

describe('CheckpointStore', () => {
  it('ensureSandbox is idempotent and reports the generation', async () => {
    const { store, addresses } = await setup();
    expect(await store.ensureSandbox('ws', 'local')).toEqual({ id: 'ws', provider: 'local', generation: 0 });
    await addresses.bumpGeneration('ws');
    expect(await store.ensureSandbox('ws', 'local')).toEqual({ id: 'ws', provider: 'local', generation: 1 });
    expect(await store.ensureSandbox('ws', 'local')).toEqual({ id: 'ws', provider: 'local', generation: 1 });
  });

  it('recording the same revision twice returns the existing record (not authoritative yet)', async () => {
    const { store } = await setup();
    const a = await store.record({ workspaceId: 'ws', generation: 1, kind: 'portable_workspace', workspaceRevision: rev(1), sourceTurnId: 't1' });
    const b = await store.record({ workspaceId: 'ws', generation: 1, kind: 'portable_workspace', workspaceRevision: rev(1) });
    expect(b.id).toBe(a.id);
    expect(a.attachedAt).toBeNull();
    expect(await store.current('ws')).toBeNull();
    // Same revision id, other kind: a distinct record.
    const native = await store.record({ workspaceId: 'ws', generation: 1, kind: 'provider_native', workspaceRevision: rev(1) });
    expect(native.id).not.toBe(a.id);
  });

  it('attach is fenced: a stale generation leaves the previous checkpoint current', async () => {
    const { store, addresses } = await setup();
    await addresses.bumpGeneration('ws');
    const a = await store.record({ workspaceId: 'ws', generation: 1, kind: 'portable_workspace', workspaceRevision: rev(1) });
    await store.attach('ws', a.id, 1);
    expect((await store.current('ws'))?.id).toBe(a.id);
    await addresses.bumpGeneration('ws'); // replaced: generation 2
    const late = await store.record({ workspaceId: 'ws', generation: 1, kind: 'portable_workspace', workspaceRevision: rev(2) });
    await rejectsWith(store.attach('ws', late.id, 1), 'StaleGeneration');
    expect((await store.current('ws'))?.id).toBe(a.id);
    // A head that moved is refused when the caller expected another.
    const b = await store.record({ workspaceId: 'ws', generation: 2, kind: 'portable_workspace', workspaceRevision: rev(3) });
    await rejectsWith(store.attach('ws', b.id, 2, { expectedHead: null }), 'HeadMoved');
    await store.attach('ws', b.id, 2, { expectedHead: a.id });
    expect((await store.current('ws'))?.id).toBe(b.id);
  });

  it('rollbackCurrent falls back to the previous attached one, and is a no-op when something newer decided', async () => {
    const { store, addresses } = await setup();
    await addresses.bumpGeneration('ws');
    const ids = [];
    for (let i = 1; i <= 3; i++) {
      const c = await store.record({ workspaceId: 'ws', generation: 1, kind: 'portable_workspace', workspaceRevision: rev(i) });
      await store.attach('ws', c.id, 1);
      ids.push(c.id);
    }
    // No-op: the head is not the rejected checkpoint.
    expect((await store.rollbackCurrent('ws', ids[1]!, 1))?.id).toBe(ids[2]);
    const back = await store.rollbackCurrent('ws', ids[2]!, 1);
    expect(back?.id).toBe(ids[1]);
    expect((await store.get('ws', ids[2]!))?.attachedAt).toBeNull();
    await rejectsWith(store.rollbackCurrent('ws', ids[1]!, 7), 'StaleGeneration');
    expect((await store.rollbackCurrent('ws', ids[1]!, 1))?.id).toBe(ids[0]);
    expect(await store.rollbackCurrent('ws', ids[0]!, 1)).toBeNull();
    expect(await store.current('ws')).toBeNull();
  });

  it('collectUnattached removes a record with its workspace entries, and an index entry without a record', async () => {
    const { store, redis, keys } = await setup();
    const old = Date.now() - 10_000;
    const doomed = await store.record({ workspaceId: 'ws', generation: 1, kind: 'portable_workspace', workspaceRevision: rev(3) }, old);
    // An id in the GC index whose record is gone (written by hand: no store operation leaves one).
    await redis.zadd(keys.unattached(0), old, 'orphan');
    const collected = await store.collectUnattached(Date.now(), 10);
    expect(collected).toEqual([{ id: doomed.id, workspaceId: 'ws', kind: 'portable_workspace', workspaceRevision: rev(3) }]);
    expect(await store.byRevision('ws', 'portable_workspace', rev(3))).toBeNull();
    expect(await store.history('ws')).toEqual([]);
    expect(await indexSize(redis, keys, 'unattached')).toBe(0);
  });

  it('collectUnattached clamps the limit to 1000 and never touches attached checkpoints', async () => {
    const { store, addresses, redis, keys } = await setup();
    await addresses.bumpGeneration('ws');
    const old = Date.now() - 10_000;
    const attached = await store.record({ workspaceId: 'ws', generation: 1, kind: 'portable_workspace', workspaceRevision: rev(9) }, old);
    await store.attach('ws', attached.id, 1);
    for (let i = 0; i < 1_005; i++) {
      await store.record({ workspaceId: `w${i % 7}`, generation: 1, kind: 'portable_workspace', workspaceRevision: `r20261130T100000000Z-g1-${String(i).padStart(6, '0')}` }, old + i);
    }
    const young = await store.record({ workspaceId: 'ws', generation: 1, kind: 'portable_workspace', workspaceRevision: rev(8) }, Date.now() + 60_000);
    const first = await store.collectUnattached(Date.now(), 5_000);
    expect(first).toHaveLength(MAX_CHECKPOINT_COLLECT_LIMIT);
    const second = await store.collectUnattached(Date.now(), 5_000);
    expect(second).toHaveLength(5);
    expect(await store.collectUnattached(Date.now(), 5_000)).toEqual([]);
    expect(await store.get('ws', attached.id)).not.toBeNull();
    expect(await store.get('ws', young.id)).not.toBeNull();
    expect((await store.current('ws'))?.id).toBe(attached.id);
    expect(await indexSize(redis, keys, 'unattached')).toBe(1);
  });
});
