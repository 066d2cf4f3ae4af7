/**
 * The local provider of another host, reached through a `HostOpsTransport` (in the fleet: that
 * host's `hostops@{host}` queue). Every method is one host op: the request is validated before it
 * is sent (the serving host validates it again) and the reply is validated by its result schema
 * before it is returned. A host that does not answer in time is `ProviderBusy` (never rebuild on
 * a slow host); failures come back with their classification (a missing sandbox is still
 * `ProviderGone`). An exec whose caller wants the output as it arrives names a Redis stream the
 * serving host appends it to (state/exec-output-store.ts); the result still carries it whole.
 *
 * Every method of the provider interface asks the serving host except `openTree`, which refuses
 * for good: the tree is a directory on that host, and persist runs there (persist@{host}).
 */
import { isFleetError, type FleetError } from '../errors/fleet-error.js';
import { parsePayload } from '../queues/payload.js';
import { ProviderBusyError, ProviderGoneError, ProviderPermanentError, isProviderError } from '../providers/provider-errors.js';
import type { CreateRequest, ExecRequest, ExecResult, FileToWrite, ReadyMarker, SandboxInfo, SandboxProvider, SnapshotStatus, TakenSnapshot, TreeSource } from '../providers/sandbox-provider.js';
import { randomUUID } from 'node:crypto';
import { newOutputCursor, type ExecOutputStore, type OutputChunk } from '../state/exec-output-store.js';
import { EXEC_JOB_SLACK_MS, MAX_EXEC_TIMEOUT_MS } from './host-op-args.js';
import { HostOpPayload, type HostOp, type HostOpFields } from './host-op-payload.js';
import { parseHostOpResult, type HostOpResult } from './host-op-results.js';
import type { HostOpsTransport } from './hostops-transport.js';
import { anySignal } from '../lib/any-signal.js';

// Failure codes that mean the host or provider was too slow, not that the sandbox is gone.
const BUSY_CODES: ReadonlySet<string> = new Set(['ProviderBusy', 'DeadlineExceeded', 'Stalled']);

// True for a failure decoded from the serving host's job (the codec marks it with the job).
const failedOnHost = (error: unknown): error is FleetError => isFleetError(error) && error.remoteJob !== undefined;

// The provider error of a fleet failure by its code: the serving host's (its code carries the
// classification), or the caller's own deadline running out while it waited (busy, like a host
// that did not answer). A provider error (the transport's "did not answer") and anything else as
// it is.
function classified(op: HostOp, error: unknown): unknown {
  if (!isFleetError(error) || isProviderError(error)) return error;
  if (error.code === 'ProviderGone') return new ProviderGoneError('local', op, error.message, { cause: error });
  if (BUSY_CODES.has(error.code)) return new ProviderBusyError('local', op, error.message, { cause: error });
  if (error.code === 'ProviderPermanent') return new ProviderPermanentError('local', op, error.message, { cause: error });
  return error;
}

export class RemoteLocalProvider implements SandboxProvider {
  readonly name = 'local' as const;
  readonly handleKind = 'volume-path' as const;

  constructor(
    private readonly transport: HostOpsTransport,
    readonly hostId: string,
    /** Where streamed exec output is read from; without it the output arrives with the result. */
    private readonly outputs?: Pick<ExecOutputStore, 'follow' | 'drain' | 'remove'>,
  ) {}

  // Runs one operation on the remote host. With `deadlineMs` the request carries the caller's
  // deadline for the job (the transport waits as long).
  async #call<O extends HostOp>(op: O, fields: HostOpFields<O>, signal: AbortSignal, deadlineMs?: number): Promise<HostOpResult<O>> {
    if (signal.aborted) throw signal.reason;
    const request = parsePayload('hostops payload', HostOpPayload, { op, ...fields, ...(deadlineMs === undefined ? {} : { deadlineMs }) });
    let reply: unknown;
    try {
      reply = await this.transport.call(this.hostId, request, signal);
    } catch (error) {
      throw classified(op, error);
    }
    try {
      return parseHostOpResult(op, reply);
    } catch (error) {
      // Asking again gets the same answer: the two hosts disagree on the result's shape.
      throw new ProviderPermanentError('local', op, `host ${this.hostId} answered with a result this host cannot use: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  create(request: CreateRequest): Promise<{ handle: string; hostId: string }> {
    // A local sandbox runs on its host's tools and ignores `runtime`: not sending it keeps hosts
    // that predate the field (their create arguments are strict) able to serve a bake's seed.
    const { signal, hostId: _hostId, runtime: _runtime, ...rest } = request;
    return this.#call('create', { args: rest }, signal);
  }
  get(handle: string, signal: AbortSignal): Promise<SandboxInfo | null> {
    return this.#call('get', { handle }, signal);
  }
  resume(handle: string, signal: AbortSignal): Promise<void> {
    return this.#call('resume', { handle }, signal);
  }
  list(signal: AbortSignal): Promise<SandboxInfo[]> {
    return this.#call('list', {}, signal);
  }
  async exec(handle: string, request: ExecRequest): Promise<ExecResult> {
    const { signal, onStdout, onStderr, ...rest } = request;
    // The command's own timeout, not the provision deadline, bounds the job on the serving host.
    const deadlineMs = Math.min(rest.timeoutMs, MAX_EXEC_TIMEOUT_MS) + EXEC_JOB_SLACK_MS;
    if (!this.outputs || (!onStdout && !onStderr)) return this.#call('exec', { handle, args: rest }, signal, deadlineMs);
    try {
      return await this.#streamedExec(this.outputs, handle, request, deadlineMs);
    } catch (error) {
      // Rolling upgrade: a serving host older than streaming refuses the stream id before it runs
      // anything (this host validated the rest), so asking again without it runs the command once.
      if (!failedOnHost(error) || error.code !== 'PayloadInvalid') throw error;
      const result = await this.#call('exec', { handle, args: rest }, signal, deadlineMs);
      if (result.stdout) onStdout?.(Buffer.from(result.stdout));
      if (result.stderr) onStderr?.(Buffer.from(result.stderr));
      return result;
    }
  }

  // An exec whose output is followed while it runs. A stream that never reached its end entry (a
  // lost connection, Redis failover) is made up from the result's copy, when nothing was dropped.
  async #streamedExec(outputs: Pick<ExecOutputStore, 'follow' | 'drain' | 'remove'>, handle: string, request: ExecRequest, deadlineMs: number): Promise<ExecResult> {
    const { signal, onStdout, onStderr, ...rest } = request;
    const execId = randomUUID();
    const cursor = newOutputCursor();
    const delivered = { stdout: 0, stderr: 0 };
    let dropped = 0;
    const deliver = (chunk: OutputChunk, gap: number) => {
      if (gap > 0) {
        dropped += gap;
        onStderr?.(Buffer.from(`[fleet: ${gap} chunk(s) of output dropped on the way from host ${this.hostId}]\n`));
      }
      delivered[chunk.stream] += chunk.data.length;
      (chunk.stream === 'stdout' ? onStdout : onStderr)?.(chunk.data);
    };
    const stop = new AbortController();
    const following = outputs.follow(execId, cursor, deliver, anySignal([signal, stop.signal])).catch(() => undefined);
    try {
      const result = await this.#call('exec', { handle, args: { ...rest, stream: execId } }, signal, deadlineMs);
      stop.abort();
      await following;
      await outputs.drain(execId, cursor, deliver).catch(() => undefined);
      if (!cursor.ended && dropped === 0) {
        for (const [stream, text, sink] of [['stdout', result.stdout, onStdout], ['stderr', result.stderr, onStderr]] as const) {
          const bytes = Buffer.from(text);
          if (bytes.length > delivered[stream]) sink?.(bytes.subarray(delivered[stream]));
        }
      }
      return result;
    } finally {
      stop.abort();
      await following;
      await outputs.remove(execId).catch(() => undefined);
    }
  }
  writeFiles(handle: string, files: readonly FileToWrite[], signal: AbortSignal): Promise<void> {
    const encoded = files.map((f) => ({ path: f.path, content: f.content.toString('base64'), ...(f.mode === undefined ? {} : { mode: f.mode }) }));
    return this.#call('writeFiles', { handle, args: { files: encoded } }, signal);
  }
  readFile(handle: string, path: string, signal: AbortSignal): Promise<Buffer | null> {
    return this.#call('readFile', { handle, args: { path } }, signal);
  }
  async openTree(): Promise<TreeSource> {
    throw new ProviderPermanentError('local', 'openTree', `the tree lives on host ${this.hostId}: persist runs there (persist@${this.hostId})`);
  }
  importTree(handle: string, from: string, signal: AbortSignal): Promise<void> {
    return this.#call('importTree', { handle, args: { from } }, signal);
  }
  markReady(handle: string, marker: ReadyMarker, signal: AbortSignal): Promise<void> {
    return this.#call('markReady', { handle, args: { marker } }, signal);
  }
  readReady(handle: string, signal: AbortSignal): Promise<ReadyMarker | null> {
    return this.#call('readReady', { handle }, signal);
  }
  clearReady(handle: string, signal: AbortSignal): Promise<void> {
    return this.#call('clearReady', { handle }, signal);
  }
  snapshot(handle: string, options: { expirationMs: number; signal: AbortSignal }): Promise<TakenSnapshot> {
    return this.#call('snapshot', { handle, args: { expirationMs: options.expirationMs } }, options.signal);
  }
  async snapshotStatus(snapshotId: string, signal: AbortSignal): Promise<SnapshotStatus> {
    try {
      return await this.#call('snapshotStatus', { args: { snapshotId } }, signal);
    } catch (error) {
      // Rolling upgrade: a serving host older than this operation refuses the request this host
      // has just validated as a PayloadInvalid. It is answered as such hosts were asked nothing
      // (usable), so its create refuses a missing snapshot with a permanent error. Drop this once
      // every host serves `snapshotStatus`.
      if (failedOnHost(error) && error.code === 'PayloadInvalid') return 'usable';
      throw error;
    }
  }
  deleteSnapshot(snapshotId: string, signal: AbortSignal): Promise<void> {
    return this.#call('deleteSnapshot', { args: { snapshotId } }, signal);
  }
  stop(handle: string, signal: AbortSignal): Promise<void> {
    return this.#call('stop', { handle }, signal);
  }
  destroy(handle: string, signal: AbortSignal): Promise<void> {
    return this.#call('destroy', { handle }, signal);
  }
}
