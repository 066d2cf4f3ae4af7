import { FleetError } from './fleet-error.js';

/** Thrown by a processor whose owning feature has not landed yet. Never retried. */
export class NotImplementedError extends FleetError {
  readonly code = 'NotImplemented';
  readonly retryable = false;

  constructor(feature: string) {
    super(`${feature} is not implemented yet`, { context: { feature } });
  }
}
