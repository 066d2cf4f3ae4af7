// A persist job left on the queue of a host that stopped, run after its workspace was rebuilt on
// another host: the intent it reads is the new incarnation's (the intent carries the newest
// generation merged), and that tree is a directory of the other host. The job hands the intent to
// the other host's queue instead of failing it for good (chaos, CI of 370b6b6: a turn of the new
// incarnation failed `ProviderPermanent: the tree lives on host host-a`). Real workers of both
// hosts on real queues, a real archive and real trees.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { StaleGenerationError } from '../../src/errors/stale-generation-error.js';
import { waitForPersist } from '../../src/producers/wait-for-persist.js';
import type { PersistResult } from '../../src/queues/persist.js';
import type { PersistHandOff } from '../../src/workers/processors/hand-off-persist.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { tempDir } from '../helpers/fleet-env.js';
import { createHarness } from '../helpers/workspace-harness.js';

describe('a persist job on the queue of a host its workspace left', () => {
  it('hands the new incarnation’s requests to that host’s queue, which persists them', async () => {
    const h = await createHarness({ FLEET_HOST_ID: 'host-a' });
    const { client, intents, addresses } = h.services;
    const hostBRoot = await tempDir('host-b-live');
    const hostB = loadConfig({ ...h.env, FLEET_HOST_ID: 'host-b', FLEET_LIVE_ROOT: hostBRoot });
    const firstB = await testWorkers(hostB, ['persist']);
    await h.services.hosts.reportSandboxHost('host-a', { sandboxes: 2, capacity: 2 });
    const placed = await h.provision('ws');
    expect(placed).toMatchObject({ hostId: 'host-b', generation: 1 });
    const remote = h.services.providerFor((await addresses.get('ws'))!);
    expect((await remote.exec(placed.handle, { cmd: ['sh', '-c', 'echo kept > note.txt'], timeoutMs: 10_000, signal: AbortSignal.timeout(20_000) })).exitCode).toBe(0);
    await client.persist({ workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end' }, { wait: true, timeoutMs: 60_000 });

    // host-b stops with a turn end of its incarnation still queued.
    await firstB.close();
    const stale = await client.persist({ workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end', turnId: 'old' });
    expect(stale.queue).toBe('persist@host-b');

    // The workspace is rebuilt on host-a (host-b stopped heartbeating), and its agent ends a turn there.
    await h.services.redis.zadd(h.services.keys.sandboxHosts(), Date.now() - 3_600_000, 'host-b');
    expect(await h.provision('ws')).toMatchObject({ outcome: 'restored', hostId: 'host-a', generation: 2 });
    await h.write('ws', { 'b.txt': 'beta' });
    const fresh = await client.persist({ workspaceId: 'ws', generation: 2, delete: true, reason: 'turn-end', turnId: 'new' });
    expect(fresh.queue).toBe('persist@host-a');
    expect(await intents.read('ws')).toMatchObject({ generation: 2, delete: true, turnId: 'new' });

    // host-b comes back first: its worker takes the old job and hands the intent over.
    const eventsB = await client.pool.events('persist@host-b');
    await testWorkers(hostB, ['persist']);
    const old = await Job.fromId(client.pool.queue('persist@host-b'), stale.jobId);
    const handed = (await old!.waitUntilFinished(eventsB, 60_000)) as PersistHandOff;
    expect(handed).toMatchObject({ workspaceId: 'ws', generation: 2, handedOffTo: { queue: 'persist@host-a' } });
    // Nothing was consumed: the intent still holds the new turn's delete request, and no run failed it.
    expect(await intents.read('ws')).toMatchObject({ generation: 2, delete: true, turnId: 'new' });
    expect((await intents.status('ws')).failedSeq).toBeLessThan(fresh.seq);

    // host-a's worker persists the new incarnation's tree; the old turn end learns it was replaced.
    await testWorkers(h.config, ['persist']);
    const eventsA = await client.pool.events('persist@host-a');
    const wait = { intents, events: eventsA, workspaceId: 'ws', queue: 'persist@host-a', timeoutMs: 60_000, pollMs: 200 };
    const result = await waitForPersist<PersistResult>({ ...wait, seq: fresh.seq, generation: 2, jobId: fresh.jobId });
    expect(result).toMatchObject({ generation: 2, files: 2 });
    await expect(waitForPersist({ ...wait, seq: stale.seq, generation: 1, jobId: stale.jobId })).rejects.toBeInstanceOf(StaleGenerationError);
    expect(await readFile(path.join(h.live('ws'), 'note.txt'), 'utf8')).toBe('kept\n');
  });

});
