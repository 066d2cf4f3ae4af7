// Cancelling running jobs through a real worker and Redis: a job whose lock is lost, and jobs still
// running when the grace period of a shutdown ends, see their signal abort with a typed, retryable
// JobCancelled (the fleet's own cancellation, since BullMQ creates no controller for its processors).
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { JobCancelledError } from '../../src/errors/job-cancelled-error.js';
import { startWorkers } from '../../src/workers/run-workers.js';
import { deferred, silentLogger, testClient } from '../helpers/fleet-harness.js';
import { testConfig, testConnection } from '../helpers/fleet-env.js';
import { addCleanup } from '../helpers/cleanup.js';

// A gc processor that reports its job id and signal, then waits for the abort and fails with its reason.
function waitingProcessor() {
  const started = deferred<{ jobId: string; signal: AbortSignal }>();
  const aborted = deferred<unknown>();
  return {
    started: started.promise,
    aborted: aborted.promise,
    processor: async (_payload: unknown, ctx: { jobId: string; signal: AbortSignal }) => {
      started.resolve({ jobId: ctx.jobId, signal: ctx.signal });
      await new Promise<never>((_, reject) => {
        ctx.signal.addEventListener('abort', () => {
          aborted.resolve(ctx.signal.reason);
          reject(ctx.signal.reason);
        });
      });
    },
  };
}

async function start(processor: ReturnType<typeof waitingProcessor>['processor']) {
  const { config } = await testConfig();
  const connection = testConnection(config, 'worker');
  const workers = await startWorkers({ config, queues: ['gc'], processors: { gc: processor }, connection, logger: silentLogger() });
  addCleanup(() => workers.close(1_000));
  return { config, connection, workers, client: testClient(config) };
}

describe('job cancellation', () => {
  it('aborts a running job whose lock was lost with JobCancelled (lock lost)', async () => {
    const run = waitingProcessor();
    const { config, connection, client } = await start(run.processor);
    await client.gc({ kind: 'litter', dryRun: true });
    const { jobId, signal } = await run.started;
    expect(signal.aborted).toBe(false);
    // Another party took the lock (as after a stall): the next renewal fails.
    await connection.del(fleetKeys(config.redis.prefix, config.redis.keyLayout).bullQueue('gc', `${jobId}:lock`));
    const reason = await run.aborted;
    expect(reason).toBeInstanceOf(JobCancelledError);
    expect(reason).toMatchObject({ code: 'JobCancelled', retryable: true, context: { queue: 'gc', jobId, why: 'lock lost' } });
  });

  it('aborts the jobs still running when the shutdown grace period ends with JobCancelled (shutdown)', async () => {
    const run = waitingProcessor();
    const { client, workers } = await start(run.processor);
    await client.gc({ kind: 'litter', dryRun: true });
    const { jobId } = await run.started;
    const closed = workers.close(100);
    const reason = await run.aborted;
    await closed;
    expect(reason).toMatchObject({ code: 'JobCancelled', retryable: true, context: { queue: 'gc', jobId, why: 'shutdown' } });
  });
});
