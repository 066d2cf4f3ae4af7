// G7: malformed payloads are refused by the producer (nothing reaches Redis) and, injected
// straight into Redis, fail at once and unrecoverably in the worker (the processor never runs).
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { QUEUE_NAMES, queueNameFor, type QueueName } from '../../src/queues/index.js';
import type { Processor } from '../../src/jobs/processor-context.js';
import { BAD_PAYLOADS } from '../fixtures/bad-payloads.js';
import { testConfig, testConnection } from '../helpers/fleet-env.js';
import { testClient, testWorkers } from '../helpers/fleet-harness.js';
import { waitFor } from '../helpers/wait.js';
import { readdir } from 'node:fs/promises';

describe('bad input', () => {
  it('the producer refuses every malformed payload naming the field, and writes nothing to Redis', async () => {
    const { config } = await testConfig();
    const client = testClient(config);
    const redis = testConnection(config);
    for (const bad of BAD_PAYLOADS) {
      const error = await client.enqueue(bad.queue, bad.data).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, JSON.stringify(bad)).toBeInstanceOf(PayloadInvalidError);
      expect((error as PayloadInvalidError).issues.map((i) => i.field)).toContain(bad.field);
    }
    const keys = await redis.keys(`${config.redis.prefix}*`);
    expect(keys).toEqual([]);
  });

  it('the worker fails injected malformed payloads at once, unrecoverably, without running the processor', async () => {
    const { config } = await testConfig();
    const redis = testConnection(config);
    const called: string[] = [];
    const recording = (queue: QueueName): Processor => async () => {
      called.push(queue);
      return 'ran';
    };
    const processors = Object.fromEntries(QUEUE_NAMES.map((q) => [q, recording(q)]));
    await testWorkers(config, QUEUE_NAMES, processors);
    const queues = new Map<string, Queue>();
    const jobs: { bad: (typeof BAD_PAYLOADS)[number]; queue: Queue; id: string }[] = [];
    try {
      for (const bad of BAD_PAYLOADS) {
        const name = queueNameFor(bad.queue, config.hostId);
        let queue = queues.get(name);
        if (!queue) {
          queue = new Queue(name, { connection: redis, prefix: fleetKeys(config.redis.prefix, config.redis.keyLayout).queuePrefix(name) });
          queues.set(name, queue);
        }
        const job = await queue.add(bad.queue, bad.data, { attempts: 5, backoff: 1 });
        jobs.push({ bad, queue, id: job.id! });
      }
      for (const { bad, queue, id } of jobs) {
        const job = await waitFor(`job ${id} of ${bad.queue} to fail`, async () => {
          const j = await queue.getJob(id);
          return j && (await j.getState()) === 'failed' ? j : undefined;
        });
        expect(job.failedReason.startsWith('PayloadInvalid: ')).toBe(true);
        expect(job.failedReason).toContain(bad.field);
        expect(job.attemptsMade).toBe(1); // unrecoverable: no retry despite attempts: 5
      }
      expect(called).toEqual([]);
      // Nothing was written to disk either.
      const home = await readdir(config.paths.home);
      expect(home).toEqual([]);
    } finally {
      for (const queue of queues.values()) await queue.close();
    }
  });
});
