/**
 * A persist job that finds the workspace's live incarnation served by another host's queue.
 *
 * The intent carries the newest generation merged (persist-intent.ts), so a job added for an
 * incarnation on host-b can, after the workspace was replaced on host-a, read a request of
 * host-a's incarnation. Host-b cannot read that tree (a local tree is a directory of host-a:
 * `RemoteLocalProvider.openTree` refuses for good), and failing there would consume host-a's
 * requests: the turn that asked for them would fail although host-a could serve it. So the job
 * leaves the intent as it is and adds a job to the queue that can run it, carrying the intent's
 * sequence number as already merged (`requestSeq`: nothing is merged again, no flag changes).
 * That queue's deduplication folds it into a job already waiting there; one already running there
 * gets it as its follow-up. An idle-reap request's stop is left to that run too.
 */
import type { Address } from '../../state/address-store.js';
import type { QueuePool } from '../../producers/queue-pool.js';
import type { PersistRequest } from '../../persist/persist-workspace.js';
import { PERSIST, persistDeduplication, persistJobOptions, type PersistPayload } from '../../queues/persist.js';
import { queueNameFor } from '../../queues/index.js';

/** What a persist job returns when it handed its workspace's intent to another host's queue. */
export interface PersistHandOff {
  readonly workspaceId: string;
  readonly generation: number;
  /** The queue (`persist@host-a`) and job that will run the intent. */
  readonly handedOffTo: { readonly queue: string; readonly jobId: string };
}

/**
 * The queue that must run `request`, when it is not `queue`: the host-bound queue of the
 * workspace's live incarnation, if that incarnation is the request's. `null` means run it here
 * (including every case the fence will refuse: no address, another generation).
 */
export function foreignHome(address: Address | null, request: Pick<PersistRequest, 'generation'>, queue: string): string | null {
  if (!address || address.generation !== request.generation) return null;
  const home = queueNameFor(PERSIST, address.hostId);
  return home === queue ? null : home;
}

export interface HandOffDeps {
  /** The fleet's queues (its client's pool). */
  readonly queues: Pick<QueuePool, 'queue'>;
}

export async function handOffPersist(deps: HandOffDeps, home: string, request: PersistRequest): Promise<PersistHandOff> {
  const data: PersistPayload = {
    workspaceId: request.workspaceId,
    generation: request.generation,
    delete: false,
    reason: request.reason,
    force: false,
    ...(request.turnId === null ? {} : { turnId: request.turnId }),
    ...(request.coveredSeq > 0 ? { requestSeq: request.coveredSeq } : {}),
  };
  const job = await deps.queues.queue(home).add(PERSIST, data, { ...persistJobOptions, deduplication: persistDeduplication(request.workspaceId) });
  return { workspaceId: request.workspaceId, generation: request.generation, handedOffTo: { queue: home, jobId: String(job.id) } };
}
