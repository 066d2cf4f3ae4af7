import { FleetError } from './fleet-error.js';

/**
 * Thrown when the listing of a sandbox tree (made inside the sandbox, so untrusted) holds a
 * record that is malformed or names a path that would leave the tree (absolute, `..`). Nothing
 * from that listing is applied. Never retried: the sandbox produced it and will produce it again.
 */
export class UnsafeListingError extends FleetError {
  readonly code = 'UnsafeListing';
  readonly retryable = false;

  constructor(reason: string, record: Buffer) {
    super(`unsafe tree listing record ${JSON.stringify(record.subarray(0, 200).toString('latin1'))}: ${reason}`, { context: { reason } });
  }
}
