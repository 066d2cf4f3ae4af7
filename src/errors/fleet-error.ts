/**
 * Base class of every error the fleet throws on purpose.
 *
 * Thrown errors carry a stable `code` (what operators and clients branch on), structured
 * `context`, and a retry intent decided where the error is created, never at the catch site.
 */
export interface FleetErrorOptions {
  /** Extra structured facts (ids, paths, values) logged with the error. */
  readonly context?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
  /** The job this error was decoded from, when it failed in a worker (see `decodeFailure`). */
  readonly remoteJob?: RemoteJobRef;
}

/** A job on a BullMQ queue (its full name, `persist@host-a`). */
export interface RemoteJobRef {
  readonly queue: string;
  readonly jobId: string;
}

export abstract class FleetError extends Error {
  /** Stable identifier, also used on the wire (see `failure-codec.ts`). */
  abstract readonly code: string;
  /** Whether running the same job again may succeed. */
  abstract readonly retryable: boolean;
  readonly context: Readonly<Record<string, unknown>>;
  /** Set when the error was thrown in a worker and decoded from its job's failure. */
  declare readonly remoteJob?: RemoteJobRef;

  constructor(message: string, options: FleetErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.context = Object.freeze({ ...(options.context ?? {}) });
    if (options.remoteJob) this.remoteJob = Object.freeze({ queue: options.remoteJob.queue, jobId: options.remoteJob.jobId });
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, message: this.message, retryable: this.retryable, context: this.context };
  }
}

// True for any error created by the fleet (works across duplicated module instances).
export function isFleetError(error: unknown): error is FleetError {
  return (
    error instanceof FleetError ||
    (error instanceof Error && typeof (error as { code?: unknown }).code === 'string' && typeof (error as { retryable?: unknown }).retryable === 'boolean')
  );
}
