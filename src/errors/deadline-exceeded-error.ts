import { FleetError } from './fleet-error.js';

/** Thrown when an operation outlives its deadline; its subprocesses have been killed. Retried. */
export class DeadlineExceededError extends FleetError {
  readonly code = 'DeadlineExceeded';
  readonly retryable = true;

  constructor(operation: string, deadlineMs: number, options: { cause?: unknown } = {}) {
    super(`${operation} exceeded its deadline of ${deadlineMs} ms`, { context: { operation, deadlineMs }, cause: options.cause });
  }
}
