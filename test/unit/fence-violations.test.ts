// The outside check of the generation fence used by chaos and the cluster failover tests: it must
// see a violation when one is planted, or its "0 violations" proves nothing.
import { describe, expect, it } from 'vitest';
import { fenceViolations, type FenceDeps } from '../../chaos/fence-violations.js';
import type { Checkpoint } from '../../src/state/checkpoint-store.js';

const checkpoint = (id: string, generation: number): Checkpoint => ({ id, workspaceId: 'ws', generation, kind: 'portable_workspace', workspaceRevision: `r-${id}`, providerRef: null, sourceTurnId: null, reason: 'turn-end', files: 1, bytes: 1, createdAt: 0, attachedAt: 1 });

function deps(attached: Checkpoint[], currentGeneration: number | null, addressGeneration: number | null): FenceDeps {
  return {
    checkpoints: { attachedIds: async () => attached.map((c) => c.id), get: async (_ws, id) => attached.find((c) => c.id === id) ?? null },
    addresses: { get: async () => (addressGeneration === null ? null : { workspaceId: 'ws', handle: 'h', generation: addressGeneration, hostId: 'local', provider: 'local', publishedAt: 0 }) },
    archive: {
      current: async () => (currentGeneration === null ? null : 'rev'),
      readManifest: async () => (currentGeneration === null ? null : ({ generation: currentGeneration } as Awaited<ReturnType<FenceDeps['archive']['readManifest']>>)),
    },
  };
}

describe('fenceViolations', () => {
  it('none when generations only rise and the current revision is not ahead of the address', async () => {
    expect(await fenceViolations(deps([checkpoint('a', 1), checkpoint('b', 1), checkpoint('c', 2)], 2, 2), 'ws')).toEqual([]);
  });

  it('an attach of an older generation after a newer one', async () => {
    expect(await fenceViolations(deps([checkpoint('a', 2), checkpoint('b', 1)], 2, 2), 'ws')).toEqual(['ws: attached r-b of generation 1 after generation 2']);
  });

  it('a current revision ahead of the published address', async () => {
    expect(await fenceViolations(deps([checkpoint('a', 3)], 3, 2), 'ws')).toEqual(['ws: current revision generation 3 > address generation 2']);
  });
});
