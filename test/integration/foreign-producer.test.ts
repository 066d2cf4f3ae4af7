// G5 for every producer: persist jobs added by a plain BullMQ `Queue` (as an app in another
// language would, following the README's protocol) against real persist workers, real rsync and
// a real archive. A foreign `delete: true` is never lost to the fleet client's merged intent.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import type { SandboxProvider } from '../../src/providers/sandbox-provider.js';
import type { FleetServices } from '../../src/app/services.js';
import type { Address } from '../../src/state/address-store.js';
import { persistProcessor } from '../../src/workers/processors/persist.js';
import { persistProcessorDeps } from '../../src/app/build-processors.js';
import type { Processor } from '../../src/jobs/processor-context.js';
import { addCleanup } from '../helpers/cleanup.js';
import { delegatingProvider } from '../helpers/delegating-provider.js';
import { testConnection } from '../helpers/fleet-env.js';
import { deferred, testClient, testWorkers } from '../helpers/fleet-harness.js';
import { waitFor } from '../helpers/wait.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';
import { readArchivedTree } from '../helpers/archived.js';

// A workspace with a committed revision of a.txt and b.txt, then b.txt deleted from the live tree.
async function workspaceWithDeletion(): Promise<Harness> {
  const h = await createHarness();
  await h.provision('ws');
  await h.write('ws', { 'a.txt': 'alpha', 'b.txt': 'beta' });
  await h.persist('ws');
  await rm(path.join(h.live('ws'), 'b.txt'));
  return h;
}

// The real persist processor whose first run blocks after it read the intent (at the ready-marker
// check, under the workspace's persist lock) until `release` resolves.
function gatedPersist(services: FleetServices) {
  const started = deferred();
  const release = deferred();
  let gated = false;
  const gate = (real: SandboxProvider): SandboxProvider =>
    delegatingProvider(real, {
      readReady: async (handle, signal) => {
        if (!gated) {
          gated = true;
          started.resolve();
          await release.promise;
        }
        return real.readReady(handle, signal);
      },
    });
  const processor = persistProcessor(persistProcessorDeps({ ...services, providerFor: (address: Address) => gate(services.providerFor(address)) })) as Processor;
  return { processor, started, release };
}

// A producer that is not the fleet's client: a plain BullMQ Queue on the host-bound queue.
function foreignQueue(h: Harness): Queue {
  const queue = new Queue(`persist@${h.config.hostId}`, { connection: testConnection(h.config), prefix: h.services.keys.queuePrefix(`persist@${h.config.hostId}`) });
  addCleanup(() => queue.close());
  return queue;
}

const currentTree = (h: Harness) => readArchivedTree(h.services.archive, 'ws');

describe('persist jobs of a foreign producer', () => {
  it('a foreign delete: true while a fleet-client upload-only persist is active ends with the deletion in the current revision', async () => {
    const h = await workspaceWithDeletion();
    const { processor, started, release } = gatedPersist(h.services);
    await testWorkers(h.config, ['persist'], { persist: processor });
    const client = testClient(h.config);
    const queue = foreignQueue(h);

    // A caller's upload-only request (a checkpoint's would take the deletion itself: checkpoints are exact).
    const ours = await client.persist({ workspaceId: 'ws', generation: 1, delete: false, reason: 'manual' });
    await started.promise;
    const foreign = await queue.add('persist', { workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end', turnId: 'turn-7' });
    expect(foreign.id).not.toBe(ours.jobId);
    // A second worker slot has picked the foreign job while the upload-only run holds the lock.
    await waitFor('the foreign job to be active', async () => ((await queue.getJobState(foreign.id!)) === 'active' ? true : undefined));
    release.resolve();

    await waitFor('the foreign job to complete', async () => ((await queue.getJobState(foreign.id!)) === 'completed' ? true : undefined));
    expect(await queue.getJobState(ours.jobId)).toBe('completed');
    expect(Object.keys(await currentTree(h))).toEqual(['a.txt']);
    expect(await h.services.intents.read('ws')).toBeNull();
    const head = await h.services.checkpoints.current('ws');
    expect(head).toMatchObject({ reason: 'turn-end', sourceTurnId: 'turn-7' });
  });

  it('a foreign delete: true added while a fleet-client upload-only persist waits runs as a reconcile', async () => {
    const h = await workspaceWithDeletion();
    const client = testClient(h.config);
    const queue = foreignQueue(h);
    // Both wait before any worker runs: the fleet's job is first in line.
    await client.persist({ workspaceId: 'ws', generation: 1, delete: false, reason: 'manual' });
    const foreign = await queue.add('persist', { workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end' });
    await testWorkers(h.config, ['persist']);
    await waitFor('the foreign job to complete', async () => ((await queue.getJobState(foreign.id!)) === 'completed' ? true : undefined));
    expect(Object.keys(await currentTree(h))).toEqual(['a.txt']);
  });

  it("merges a foreign job's request once, however often the job runs", async () => {
    const h = await createHarness();
    const job = { queue: 'persist@local', jobId: '17' };
    const request = { delete: true, force: false, reason: 'turn-end' as const, generation: 1 };
    const first = await h.services.intents.claim('ws', job, request);
    const again = await h.services.intents.claim('ws', job, { ...request, delete: false });
    expect(first).toEqual({ seq: first.seq, merged: true });
    expect(again).toEqual({ seq: first.seq, merged: false });
    expect(await h.services.intents.read('ws')).toMatchObject({ seq: first.seq, delete: true });
    // The finished job drops its claim; its request is covered.
    expect(await h.services.intents.complete('ws', first.seq, {}, job)).toBe(true);
    expect(await h.services.intents.claimedSeq('ws', job)).toBeNull();
  });
});
