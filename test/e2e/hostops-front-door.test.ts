// Through the front door (issue 12): hostile jobs enqueued by a plain BullMQ producer on a running
// worker process's real `hostops@<host>` queue end failed at once (no retry) with a typed
// `PayloadInvalid` reason naming the field and the value, and the fleet home (archive, live tree,
// snapshots) is byte-identical afterwards. On main the first of them deleted the fleet home.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { loadConfig } from '../../src/config.js';
import { decodeFailure } from '../../src/errors/failure-codec.js';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { createFleetClient } from '../../src/producers/fleet-client.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testConnection, testEnv } from '../helpers/fleet-env.js';
import { startFleet } from '../helpers/processes.js';
import { readTree } from '../helpers/tree.js';
import { waitFor } from '../helpers/wait.js';

describe('hostops through a running fleet', () => {
  it('hostile hostops jobs fail for good with the typed reason; the fleet home is intact', { timeout: 120_000 }, async () => {
    // No checkpoint ticks or janitor runs while the home is compared.
    const env = await testEnv({ FLEET_CHECKPOINT_INTERVAL_MS: '2592000000', FLEET_GC_SCHEDULE: 'orphans=off' });
    const config = loadConfig(env);
    const home = config.paths.home;
    const worker = startFleet(['worker', '--queues', 'provision,persist'], env);
    await worker.waitForOutput('serving');
    expect(worker.stdout()).toContain(`hostops@${config.hostId}`);

    // A workspace with an archived revision and a base snapshot, so there is something to lose.
    const client = createFleetClient({ config });
    addCleanup(() => client.close());
    const { result: provisioned } = await client.provision({ workspaceId: 'ws' }, { wait: true, timeoutMs: 60_000 });
    await writeFile(path.join(config.paths.liveRoot, 'ws', 'root', 'notes.txt'), 'keep me');
    await client.persist({ workspaceId: 'ws', generation: provisioned!.generation, delete: true, reason: 'turn-end' }, { wait: true, timeoutMs: 60_000 });
    await mkdir(path.join(config.paths.snapshotRoot, 'base-1', 'tree'), { recursive: true });
    await writeFile(path.join(config.paths.snapshotRoot, 'base-1', 'tree', 'base.txt'), 'base');
    // The persist's stat cache is written after its job answers (through a temporary, then renamed):
    // the home is taken once it is in place, not while its temporary exists.
    const before = await waitFor('the stat cache in place', async () => {
      const tree = await readTree(home);
      const names = Object.keys(tree);
      return names.includes('live/ws/meta/stat-cache.json') && !names.some((name) => name.startsWith('live/ws/meta/stat-cache.json.tmp-')) ? tree : undefined;
    });

    const queue = new Queue(`hostops@${config.hostId}`, { connection: testConnection(config), prefix: fleetKeys(config.redis.prefix, config.redis.keyLayout).queuePrefix(`hostops@${config.hostId}`) });
    addCleanup(() => queue.close());
    const handle = provisioned!.handle;
    const attacks: [string, Record<string, unknown>, RegExp][] = [
      ['deleteSnapshot', { op: 'deleteSnapshot', args: { snapshotId: '..' } }, /^PayloadInvalid: hostops payload: args\.snapshotId: .* \(got "\.\."\)$/],
      ['create', { op: 'create', args: { workspaceId: '../../x', generation: 1, source: { type: 'empty' } } }, /^PayloadInvalid: hostops payload: args\.workspaceId: .* \(got "\.\.\/\.\.\/x"\)$/],
      ['importTree', { op: 'importTree', handle, args: { from: home } }, /^PayloadInvalid: hostops payload: args\.from: /],
      ['exec', { op: 'exec', handle, args: { cmd: 'touch pwned', timeoutMs: 5_000 } }, /^PayloadInvalid: hostops payload: args\.cmd: must be an array of strings \(got "touch pwned"\)$/],
      ['destroy', { op: 'destroy', handle: 'local:local:..:g1' }, /^PayloadInvalid: hostops payload: handle: /],
    ];
    const outcomes: { name: string; state: string; failedReason: string; decoded: unknown; attemptsMade: number }[] = [];
    for (const [name, payload] of attacks) {
      // Three attempts offered: a permanent failure must not use them.
      const job = await queue.add(name, payload, { attempts: 3, backoff: { type: 'fixed', delay: 10 } });
      const state = await waitFor(`the ${name} job to finish`, async () => {
        const current = await queue.getJobState(job.id!);
        return current === 'failed' || current === 'completed' ? current : undefined;
      });
      const finished = (await queue.getJob(job.id!))!;
      // The human first line of the reason, and the error a caller decodes from all of it.
      const decoded = decodeFailure(queue.name, job.id!, finished.failedReason);
      outcomes.push({ name, state, failedReason: finished.failedReason.split('\n')[0]!, decoded, attemptsMade: finished.attemptsMade });
    }
    // Damage first: a missing guard shows as a changed home before it shows as a wrong reason.
    expect(await readTree(home).catch(() => ({}))).toEqual(before);
    for (const [i, [name, , reason]] of attacks.entries()) {
      expect(outcomes[i], name).toMatchObject({ state: 'failed', failedReason: expect.stringMatching(reason), attemptsMade: 1 });
      expect(outcomes[i]!.decoded, name).toBeInstanceOf(PayloadInvalidError);
      expect(outcomes[i]!.decoded, name).toMatchObject({ retryable: false, remoteJob: { queue: queue.name } });
    }

    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  });
});
