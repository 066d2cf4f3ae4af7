import { FleetError } from './fleet-error.js';

/** Thrown at the HTTP edge when a request body exceeds the configured limit (413). */
export class PayloadTooLargeError extends FleetError {
  readonly code = 'PayloadTooLarge';
  readonly retryable = false;

  constructor(limitBytes: number) {
    super(`request body exceeds ${limitBytes} bytes`, { context: { limitBytes } });
  }
}
