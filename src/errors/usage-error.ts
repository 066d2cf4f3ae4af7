import { FleetError } from './fleet-error.js';

/** Thrown by the CLI for a malformed command line (exit code 2). */
export class UsageError extends FleetError {
  readonly code = 'Usage';
  readonly retryable = false;
}
