// A provision that replaces an incarnation fences it before it decides what to restore: a turn
// the old incarnation acknowledged just before the replacement is in the restored tree, and a
// persist of the old incarnation after the fence attaches nothing. (Found by the chaos long
// profile: a Vercel workspace whose provision read the archive's head, then a persist of the
// old incarnation attached a newer revision, then the provision bumped the generation and
// restored the older one; 46 acknowledged files went missing from the archive's current tree.)
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Address } from '../../src/state/address-store.js';
import type { SandboxProvider } from '../../src/providers/sandbox-provider.js';
import { persistWorkspace } from '../../src/persist/persist-workspace.js';
import { persistDeps } from '../../src/app/persist-deps.js';
import { createHarness, rejectsWith } from '../helpers/workspace-harness.js';

describe('provision fences the old incarnation before it plans the restore', () => {
  it('a turn acknowledged by the old incarnation while the replacement starts is restored; a later one of the old incarnation is refused', async () => {
    const h = await createHarness();
    const first = await h.provision('ws');
    await h.write('ws', { 'a.txt': 'first turn' });
    await h.persist('ws');
    await h.write('ws', { 'b.txt': 'acknowledged just before the replacement' });

    // The old incarnation's persist worker, wired before the probe is made to find it gone.
    const oldDeps = persistDeps(h.services);
    const turn = (turnId: string) =>
      persistWorkspace(oldDeps, { workspaceId: 'ws', generation: first.generation, delete: true, force: false, reason: 'turn-end', turnId, coveredSeq: 0 }, h.ctx());
    const services = h.services as { providerFor: (address: Address) => SandboxProvider };
    const real = services.providerFor;
    // The provision's probe finds the old incarnation gone (as a Vercel outage looks); its persists still run.
    services.providerFor = (address) => {
      const provider = real(address);
      return new Proxy(provider, { get: (target, key) => (key === 'get' ? async () => null : Reflect.get(target, key, target)) });
    };
    const bump = h.services.addresses.bumpGeneration.bind(h.services.addresses);
    let acknowledged: string | null = null;
    h.services.addresses.bumpGeneration = async (workspaceId, floor) => {
      // Right before the fence: the old incarnation acknowledges a turn.
      acknowledged = (await turn('t-before')).revision;
      return bump(workspaceId, floor);
    };
    const second = await h.provision('ws');
    services.providerFor = real;
    expect(second).toMatchObject({ outcome: 'restored', generation: first.generation + 1, source: acknowledged });
    expect(await readFile(path.join(h.live('ws'), 'b.txt'), 'utf8')).toBe('acknowledged just before the replacement');
    // A late persist of the old incarnation attaches nothing.
    await rejectsWith(turn('t-after'), 'StaleGeneration');
    expect((await h.services.checkpoints.current('ws'))?.workspaceRevision).toBe(acknowledged);
    // The new incarnation's next turn keeps the acknowledged file.
    await writeFile(path.join(h.live('ws'), 'c.txt'), 'next');
    const next = await h.persist('ws', { generation: second.generation });
    expect(next.files).toBe(3);
  });
});
