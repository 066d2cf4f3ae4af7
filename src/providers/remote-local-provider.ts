/**
 * The local provider of another host, reached through that host's `hostops@{host}` queue: each
 * call is one job whose result the caller waits for within its deadline. A wait that runs out is
 * `ProviderBusy` (never rebuild on a slow host); failures come back with their classification
 * (a missing sandbox is still `ProviderGone`). Streaming exec output is not forwarded: the
 * output arrives with the result.
 */
import { isFleetError } from '../errors/fleet-error.js';
import type { FleetClient } from '../producers/fleet-client.js';
import { HOSTOPS, HostOpPayload, hostOpJobOptions, type HostOpRequest } from '../queues/hostops.js';
import { parsePayload } from '../queues/payload.js';
import { EXEC_JOB_SLACK_MS, MAX_EXEC_TIMEOUT_MS } from '../queues/hostops-args.js';
import { waitForJob } from '../producers/wait-for-job.js';
import { ProviderBusyError, ProviderGoneError, ProviderPermanentError } from './provider-errors.js';
import type { CreateRequest, ExecRequest, ExecResult, FileToWrite, ReadyMarker, SandboxInfo, SandboxProvider, SnapshotStatus, TreeSource } from './sandbox-provider.js';

// The longest a caller waits when its signal carries no deadline of its own.
const DEFAULT_WAIT_MS = 5 * 60_000;
// Time for a job to reach the serving host's worker and its result to come back.
const QUEUE_SLACK_MS = 10_000;

export class RemoteLocalProvider implements SandboxProvider {
  readonly name = 'local' as const;

  constructor(
    private readonly client: FleetClient,
    readonly hostId: string,
    private readonly waitMs = DEFAULT_WAIT_MS,
  ) {}

  // Runs one operation on the remote host and maps its failure to a provider error class.
  // The request is validated before it is enqueued (the serving host validates it again). With
  // `deadlineMs` the job carries the caller's deadline and the wait lasts as long.
  async #call<T>(request: HostOpRequest, signal: AbortSignal, deadlineMs?: number): Promise<T> {
    if (signal.aborted) throw signal.reason;
    const payload = parsePayload('hostops payload', HostOpPayload, deadlineMs === undefined ? request : { ...request, deadlineMs });
    const waitMs = Math.max(this.waitMs, (payload.deadlineMs ?? 0) + QUEUE_SLACK_MS);
    const op = payload.op;
    const bullName = `${HOSTOPS}@${this.hostId}`;
    const queue = this.client.pool.queue(bullName);
    const events = await this.client.pool.events(bullName);
    const job = await queue.add(op, payload, hostOpJobOptions);
    const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    aborted.catch(() => undefined);
    try {
      return (await Promise.race([waitForJob<T>(queue, String(job.id), events, waitMs), aborted])) as T;
    } catch (error) {
      if (isFleetError(error) && error.code === 'WaitTimeout') throw new ProviderBusyError('local', op, `host ${this.hostId} did not answer within ${waitMs} ms`, { cause: error });
      if (isFleetError(error)) {
        // The remote failure's code carries the provider's classification.
        if (error.code === 'ProviderGone') throw new ProviderGoneError('local', op, error.message, { cause: error });
        if (error.code === 'ProviderBusy' || error.code === 'DeadlineExceeded' || error.code === 'Stalled') throw new ProviderBusyError('local', op, error.message, { cause: error });
        if (error.code === 'ProviderPermanent') throw new ProviderPermanentError('local', op, error.message, { cause: error });
      }
      throw error;
    }
  }

  create(request: CreateRequest): Promise<{ handle: string; hostId: string }> {
    const { signal, hostId: _hostId, ...rest } = request;
    return this.#call({ op: 'create', args: rest }, signal);
  }
  get(handle: string, signal: AbortSignal): Promise<SandboxInfo | null> {
    return this.#call({ op: 'get', handle }, signal);
  }
  resume(handle: string, signal: AbortSignal): Promise<void> {
    return this.#call({ op: 'resume', handle }, signal);
  }
  async list(): Promise<SandboxInfo[]> {
    // Orphans are swept by each host's janitor; a remote host's list is not needed here.
    return [];
  }
  exec(handle: string, request: ExecRequest): Promise<ExecResult> {
    const { signal, onStdout: _out, onStderr: _err, ...rest } = request;
    // The command's own timeout, not the provision deadline, bounds the job on the serving host.
    return this.#call({ op: 'exec', handle, args: rest }, signal, Math.min(rest.timeoutMs, MAX_EXEC_TIMEOUT_MS) + EXEC_JOB_SLACK_MS);
  }
  writeFiles(handle: string, files: readonly FileToWrite[], signal: AbortSignal): Promise<void> {
    const encoded = files.map((f) => ({ path: f.path, content: f.content.toString('base64'), ...(f.mode === undefined ? {} : { mode: f.mode }) }));
    return this.#call({ op: 'writeFiles', handle, args: { files: encoded } }, signal);
  }
  async readFile(handle: string, path: string, signal: AbortSignal): Promise<Buffer | null> {
    const content = await this.#call<string | null>({ op: 'readFile', handle, args: { path } }, signal);
    return content === null ? null : Buffer.from(content, 'base64');
  }
  async openTree(): Promise<TreeSource> {
    throw new ProviderPermanentError('local', 'openTree', `the tree lives on host ${this.hostId}: persist runs there (persist@${this.hostId})`);
  }
  importTree(handle: string, from: string, signal: AbortSignal): Promise<void> {
    return this.#call({ op: 'importTree', handle, args: { from } }, signal);
  }
  markReady(handle: string, marker: ReadyMarker, signal: AbortSignal): Promise<void> {
    return this.#call({ op: 'markReady', handle, args: { marker } }, signal);
  }
  readReady(handle: string, signal: AbortSignal): Promise<ReadyMarker | null> {
    return this.#call({ op: 'readReady', handle }, signal);
  }
  clearReady(handle: string, signal: AbortSignal): Promise<void> {
    return this.#call({ op: 'clearReady', handle }, signal);
  }
  snapshot(handle: string, options: { expirationMs: number; signal: AbortSignal }): Promise<{ snapshotId: string }> {
    return this.#call({ op: 'snapshot', handle, args: { expirationMs: options.expirationMs } }, options.signal);
  }
  async snapshotStatus(): Promise<SnapshotStatus> {
    // Local snapshots never expire, and the serving host refuses a missing one at create with a
    // permanent error: nothing is trusted that the host could not use.
    return 'usable';
  }
  deleteSnapshot(snapshotId: string, signal: AbortSignal): Promise<void> {
    return this.#call({ op: 'deleteSnapshot', args: { snapshotId } }, signal);
  }
  stop(handle: string, signal: AbortSignal): Promise<void> {
    return this.#call({ op: 'stop', handle }, signal);
  }
  destroy(handle: string, signal: AbortSignal): Promise<void> {
    return this.#call({ op: 'destroy', handle }, signal);
  }
}
