/**
 * Host ops over BullMQ: each request is one job on the serving host's `hostops@{host}` queue
 * whose result the caller waits for. The wait lasts the caller's deadline when the job carries
 * one (an exec's timeout plus slack), else at least `waitMs`, plus the time for the job to reach
 * the serving host and its result to come back.
 */
import { isFleetError } from '../errors/fleet-error.js';
import type { QueuePool } from '../producers/queue-pool.js';
import { waitForJob } from '../producers/wait-for-job.js';
import { ProviderBusyError } from '../providers/provider-errors.js';
import type { HostOpPayload } from './host-op-payload.js';
import { hostOpJobOptions, hostOpsQueueName } from './hostops-queue.js';
import type { HostOpsTransport } from './hostops-transport.js';

// The longest a caller waits when its request carries no deadline of its own.
const DEFAULT_WAIT_MS = 5 * 60_000;
// Time for a job to reach the serving host's worker and its result to come back.
const QUEUE_SLACK_MS = 10_000;

export class BullmqHostOpsTransport implements HostOpsTransport {
  constructor(
    private readonly pool: QueuePool,
    private readonly waitMs = DEFAULT_WAIT_MS,
  ) {}

  async call(hostId: string, request: HostOpPayload, signal: AbortSignal): Promise<unknown> {
    if (signal.aborted) throw signal.reason;
    const waitMs = Math.max(this.waitMs, (request.deadlineMs ?? 0) + QUEUE_SLACK_MS);
    const bullName = hostOpsQueueName(hostId);
    const queue = this.pool.queue(bullName);
    const events = await this.pool.events(bullName);
    const job = await queue.add(request.op, request, hostOpJobOptions);
    // Checked again here: an abort during the enqueue above fired no event this listener can see.
    const aborted = new Promise<never>((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
    aborted.catch(() => undefined);
    try {
      return await Promise.race([waitForJob<unknown>(queue, String(job.id), events, waitMs), aborted]);
    } catch (error) {
      if (isFleetError(error) && error.code === 'WaitTimeout') throw new ProviderBusyError('local', request.op, `host ${hostId} did not answer within ${waitMs} ms`, { cause: error });
      throw error;
    }
  }
}
