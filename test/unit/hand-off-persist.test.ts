// Which queue must run a persist request: the host-bound queue of the workspace's live
// incarnation when the request is that incarnation's (hand-off-persist.ts).
import { describe, expect, it } from 'vitest';
import { foreignHome } from '../../src/workers/processors/hand-off-persist.js';

describe('foreignHome', () => {
  it('runs here when the live incarnation is this queue’s, or when the fence will refuse the request', () => {
    const address = { workspaceId: 'ws', handle: 'local:host-a:ws:g2', generation: 2, hostId: 'host-a', provider: 'local' as const, publishedAt: 0 };
    expect(foreignHome(address, { generation: 2 }, 'persist@host-b')).toBe('persist@host-a');
    expect(foreignHome(address, { generation: 2 }, 'persist@host-a')).toBeNull();
    // Another generation, or no address: the fence refuses it here (StaleGeneration), nothing to hand over.
    expect(foreignHome(address, { generation: 1 }, 'persist@host-b')).toBeNull();
    expect(foreignHome(null, { generation: 2 }, 'persist@host-b')).toBeNull();
    expect(foreignHome({ ...address, hostId: 'vercel', provider: 'vercel' }, { generation: 2 }, 'persist@host-b')).toBe('persist@vercel');
  });
});
