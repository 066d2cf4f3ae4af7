// G5: deduplication that loses nothing, proven against real Redis and real BullMQ workers.
import { describe, expect, it } from 'vitest';
import { PersistIntentStore } from '../../src/state/persist-intent.js';
import { fleetKeys } from '../../src/keys.js';
import type { Processor } from '../../src/jobs/processor-context.js';
import type { PersistPayload } from '../../src/queues/persist.js';
import { testConfig, testConnection } from '../helpers/fleet-env.js';
import { deferred, testClient, testWorkers } from '../helpers/fleet-harness.js';
import { waitFor } from '../helpers/wait.js';

interface Run {
  delete: boolean;
  reason: string;
  turnId: string | null;
  seq: number;
}

// A persist processor that behaves like the real one towards the intent: read, work, complete.
function recordingPersist(intents: PersistIntentStore, runs: Run[], gates: (() => Promise<void>)[]): Processor {
  return (async (payload: PersistPayload) => {
    const intent = await intents.read(payload.workspaceId);
    const run: Run = intent
      ? { delete: intent.delete, reason: intent.reason, turnId: intent.turnId, seq: intent.seq }
      : { delete: payload.delete, reason: payload.reason, turnId: payload.turnId ?? null, seq: payload.requestSeq ?? 0 };
    runs.push(run);
    const gate = gates.shift();
    if (gate) await gate();
    await intents.complete(payload.workspaceId, run.seq, { seq: run.seq });
    return { coveredSeq: run.seq };
  }) as Processor;
}

async function setup() {
  const { config } = await testConfig();
  const redis = testConnection(config);
  const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
  const intents = new PersistIntentStore(redis, keys);
  const client = testClient(config);
  await client.addresses.bumpGeneration('ws1');
  await client.addresses.publish({ workspaceId: 'ws1', handle: 'local:ws1', generation: 1, hostId: config.hostId, provider: 'local' });
  return { config, intents, client };
}

describe('persist deduplication (keepLastIfActive + intent)', () => {
  it('runs a request that arrives while its twin is active once, after it', async () => {
    const { config, intents, client } = await setup();
    const runs: Run[] = [];
    const started = deferred();
    const release = deferred();
    await testWorkers(config, ['persist'], {
      persist: recordingPersist(intents, runs, [
        async () => {
          started.resolve();
          await release.promise;
        },
      ]),
    });
    const first = await client.persist({ workspaceId: 'ws1', generation: 1, reason: 'turn-end', turnId: 't1', delete: true });
    await started.promise;
    const second = await client.persist({ workspaceId: 'ws1', generation: 1, reason: 'checkpoint' });
    const third = await client.persist({ workspaceId: 'ws1', generation: 1, reason: 'manual', turnId: 't3' });
    release.resolve();
    await waitFor('both runs', async () => ((await intents.status('ws1')).completedSeq >= third.seq ? true : undefined));
    expect(runs).toHaveLength(2);
    expect(runs[0]).toMatchObject({ delete: true, reason: 'turn-end', turnId: 't1', seq: first.seq });
    // The follow-up covers both requests made during the active run, with the newest reason/turn.
    expect(runs[1]).toMatchObject({ delete: false, reason: 'manual', turnId: 't3', seq: third.seq });
    expect(second.seq).toBeLessThan(third.seq);
    expect(await intents.read('ws1')).toBeNull();
  });

  it('reconciles when a delete request merges with a later upload-only one while waiting', async () => {
    const { config, intents, client } = await setup();
    const runs: Run[] = [];
    await client.persist({ workspaceId: 'ws1', generation: 1, delete: true, reason: 'turn-end', turnId: 'a' });
    const last = await client.persist({ workspaceId: 'ws1', generation: 1, delete: false, reason: 'checkpoint' });
    await testWorkers(config, ['persist'], { persist: recordingPersist(intents, runs, []) });
    await waitFor('the merged run', async () => ((await intents.status('ws1')).completedSeq >= last.seq ? true : undefined));
    expect(runs).toEqual([{ delete: true, reason: 'checkpoint', turnId: null, seq: last.seq }]);
  });

  it('keeps delete sticky across requests that arrive during an active run', async () => {
    const { config, intents, client } = await setup();
    const runs: Run[] = [];
    const started = deferred();
    const release = deferred();
    await testWorkers(config, ['persist'], {
      persist: recordingPersist(intents, runs, [
        async () => {
          started.resolve();
          await release.promise;
        },
      ]),
    });
    await client.persist({ workspaceId: 'ws1', generation: 1, reason: 'checkpoint' });
    await started.promise;
    await client.persist({ workspaceId: 'ws1', generation: 1, delete: true, reason: 'turn-end', turnId: 't9' });
    const last = await client.persist({ workspaceId: 'ws1', generation: 1, delete: false, reason: 'checkpoint' });
    release.resolve();
    await waitFor('the follow-up run', async () => ((await intents.status('ws1')).completedSeq >= last.seq ? true : undefined));
    expect(runs).toHaveLength(2);
    expect(runs[0]!.delete).toBe(false);
    expect(runs[1]).toMatchObject({ delete: true, reason: 'checkpoint', seq: last.seq });
  });

  it('a delete already covered by a finished run does not leak into the next one', async () => {
    const { intents } = await setup();
    const a = await intents.merge('ws1', { delete: true, force: false, reason: 'turn-end', generation: 1 });
    const b = await intents.merge('ws1', { delete: false, force: false, reason: 'checkpoint', generation: 1 });
    // A run that read the intent at seq a completes while b is pending.
    expect(await intents.complete('ws1', a, {})).toBe(false);
    expect(await intents.read('ws1')).toMatchObject({ seq: b, delete: false, reason: 'checkpoint' });
  });

  it('waits for the run that covers the request', async () => {
    const { config, intents, client } = await setup();
    const runs: Run[] = [];
    await testWorkers(config, ['persist'], { persist: recordingPersist(intents, runs, []) });
    const done = await client.persist({ workspaceId: 'ws1', generation: 1, reason: 'manual' }, { wait: true, timeoutMs: 20_000 });
    expect(done.result).toEqual({ seq: done.seq });
    expect(runs).toHaveLength(1);
  });
});

describe('provision deduplication', () => {
  it('gives every concurrent caller of one workspace the same job and result', async () => {
    const { config } = await testConfig();
    const client = testClient(config);
    let runs = 0;
    const release = deferred();
    await testWorkers(config, ['provision'], {
      provision: async () => {
        runs += 1;
        await release.promise;
        return { handle: `h-${runs}`, generation: runs };
      },
    });
    const events = await client.pool.events('provision');
    let deduplicated = 0;
    events.on('deduplicated', () => {
      deduplicated += 1;
    });
    const callers = Array.from({ length: 10 }, () => client.provision({ workspaceId: 'ws-p' }, { wait: true, timeoutMs: 20_000 }));
    // Release the single run only once the other nine adds have been merged into it.
    await waitFor('nine deduplicated adds', () => (deduplicated === 9 ? true : undefined));
    release.resolve();
    const results = await Promise.all(callers);
    expect(runs).toBe(1);
    expect(new Set(results.map((r) => r.jobId)).size).toBe(1);
    for (const result of results) expect(result.result).toEqual({ handle: 'h-1', generation: 1 });
  });
});
