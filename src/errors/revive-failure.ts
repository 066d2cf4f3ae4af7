/**
 * Rebuilds the error a worker threw from its wire form, as an instance of the same class when
 * `failure-classes.ts` lists it, else as a `RemoteJobError`; either way with the worker's code,
 * message, retry intent and context, and `remoteJob` naming the job it failed in.
 */
import { failureClassNamed } from './failure-classes.js';
import type { FailureWire } from './failure-wire.js';
import { FleetError, type RemoteJobRef } from './fleet-error.js';
import { RemoteJobError } from './remote-job-error.js';
import { ApiError } from './api-error.js';

// Builds the state of a revived error. Constructed with the listed class as `new.target`, so the
// instance has that class's prototype (methods, getters, `instanceof`) and name while the class's
// own constructor, whose arguments the wire does not carry, never runs.
class RevivedFailure extends FleetError {
  readonly code: string;
  readonly retryable: boolean;

  constructor(wire: FailureWire, job: RemoteJobRef | undefined) {
    super(wire.message, { context: wire.context, ...(job ? { remoteJob: job } : {}) });
    this.code = wire.code;
    this.retryable = wire.retryable;
  }
}

/**
 * The error `wire` describes, thrown in `job`; or, without a job, answered by the HTTP API with
 * `status` (a class this package does not list is then an `ApiError`).
 */
export function reviveFailure(wire: FailureWire, job: RemoteJobRef): FleetError;
export function reviveFailure(wire: FailureWire, job: undefined, status: number): FleetError;
export function reviveFailure(wire: FailureWire, job: RemoteJobRef | undefined, status = 0): FleetError {
  const Class = wire.name === undefined ? undefined : failureClassNamed(wire.name);
  if (!Class && !job) return new ApiError(status, wire.code, wire.message, { retryable: wire.retryable, context: wire.context });
  if (!Class) return new RemoteJobError(job!.queue, job!.jobId, wire.code, wire.message, { retryable: wire.retryable, context: wire.context });
  const error = Reflect.construct(RevivedFailure, [wire, job], Class) as FleetError;
  // A class's own fields are facts its context carries under the same names (`path`, `issues`,
  // `exitCode`): restore them, never over anything the instance or its prototype already has.
  for (const [key, value] of Object.entries(wire.context)) {
    if (!(key in error) && key !== 'cause') Object.defineProperty(error, key, { value, enumerable: true });
  }
  return error;
}
