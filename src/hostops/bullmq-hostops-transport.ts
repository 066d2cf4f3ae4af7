/**
 * Host ops over BullMQ: each request is one job on the serving host's `hostops@{host}` queue
 * whose result the caller waits for. The wait lasts the caller's deadline when the job carries
 * one (an exec's timeout plus slack), else at least `waitMs`, plus the time for the job to reach
 * the serving host and its result to come back.
 *
 * A host that dies does not answer: its queue has no worker left. So while it waits, the caller
 * also watches the host's heartbeat (`hostAlive`, every `livenessPollMs`); once the host is seen
 * dead the request is withdrawn from the queue if it has not started (it can then never run
 * late) and the call fails with `ProviderGoneError`: the host's sandboxes are gone with it, as
 * `probeLive` already judges a dead host's incarnation. A provision caught mid-restore on a host
 * that died then retries on a live host within seconds, instead of waiting out the 5-minute cap.
 */
import { isFleetError } from '../errors/fleet-error.js';
import type { QueuePool } from '../producers/queue-pool.js';
import { waitForJob } from '../producers/wait-for-job.js';
import { ProviderBusyError, ProviderGoneError } from '../providers/provider-errors.js';
import { delay } from '../lib/with-timeout.js';
import type { HostOpPayload } from './host-op-payload.js';
import { hostOpJobOptions, hostOpsQueueName } from './hostops-queue.js';
import type { HostOpsTransport } from './hostops-transport.js';

// The longest a caller waits when its request carries no deadline of its own.
const DEFAULT_WAIT_MS = 5 * 60_000;
// Time for a job to reach the serving host's worker and its result to come back.
const QUEUE_SLACK_MS = 10_000;

/** Whether a sandbox host still heartbeats (HostRegistry.isAlive for local sandboxes). */
export type HostAlive = (hostId: string) => Promise<boolean>;

export class BullmqHostOpsTransport implements HostOpsTransport {
  constructor(
    private readonly pool: QueuePool,
    private readonly waitMs = DEFAULT_WAIT_MS,
    private readonly liveness?: { readonly hostAlive: HostAlive; readonly pollMs: number },
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
    const stop = new AbortController();
    const died = this.liveness ? this.#whenDead(hostId, String(job.id), request.op, stop.signal) : null;
    died?.catch(() => undefined);
    try {
      return await Promise.race([waitForJob<unknown>(queue, String(job.id), events, waitMs), aborted, ...(died ? [died] : [])]);
    } catch (error) {
      if (isFleetError(error) && error.code === 'WaitTimeout') throw new ProviderBusyError('local', request.op, `host ${hostId} did not answer within ${waitMs} ms`, { cause: error });
      throw error;
    } finally {
      stop.abort();
    }
  }

  // Rejects with ProviderGoneError once the host is seen dead and the request has not finished;
  // never settles otherwise. A request still waiting is removed first, so it cannot run later.
  async #whenDead(hostId: string, jobId: string, op: string, signal: AbortSignal): Promise<never> {
    const { hostAlive, pollMs } = this.liveness!;
    const queue = this.pool.queue(hostOpsQueueName(hostId));
    for (;;) {
      await delay(pollMs, signal);
      const alive = await hostAlive(hostId).catch(() => true);
      if (alive) continue;
      // 1 when the job was still waiting (or delayed) and is gone now; 0 when it is active (locked) or finished.
      const withdrawn = (await queue.remove(jobId).catch(() => 0)) === 1;
      const state = withdrawn ? 'withdrawn' : await queue.getJobState(jobId).catch(() => 'unknown');
      // A result may have landed just before the host died: the wait above delivers it.
      if (state === 'completed' || state === 'failed') continue;
      throw new ProviderGoneError('local', op, `host ${hostId} stopped heartbeating while serving ${op} (request ${state === 'withdrawn' ? 'withdrawn before it started' : `left ${state}`})`, { context: { hostId, jobId, state } });
    }
  }
}
