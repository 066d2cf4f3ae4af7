/**
 * Provider failures, classified by type at the provider boundary (never by message text):
 * - busy: the provider is slow or overloaded (timeouts). Retry with a growing deadline; never
 *   rebuild and never write around it.
 * - gone: the sandbox no longer exists or refuses connections. Rebuild with generation + 1.
 * - permanent: a request the provider will never accept (bad input, auth, quota).
 */
import { FleetError, type FleetErrorOptions } from '../errors/fleet-error.js';

export type ProviderErrorClass = 'busy' | 'gone' | 'permanent';

export abstract class ProviderError extends FleetError {
  abstract readonly classification: ProviderErrorClass;
  readonly provider: string;
  readonly operation: string;

  constructor(provider: string, operation: string, message: string, options: FleetErrorOptions = {}) {
    super(`${provider} ${operation}: ${message}`, { ...options, context: { provider, operation, ...(options.context ?? {}) } });
    this.provider = provider;
    this.operation = operation;
  }
}

/** The provider did not answer in time. Retried with growing deadlines. */
export class ProviderBusyError extends ProviderError {
  readonly code = 'ProviderBusy';
  readonly retryable = true;
  readonly classification = 'busy' as const;
}

/** The sandbox is gone (not found, connection refused, host dead). Rebuilt with generation + 1. */
export class ProviderGoneError extends ProviderError {
  readonly code = 'ProviderGone';
  readonly retryable = true;
  readonly classification = 'gone' as const;
}

/** The provider refused the request for good. Never retried. */
export class ProviderPermanentError extends ProviderError {
  readonly code = 'ProviderPermanent';
  readonly retryable = false;
  readonly classification = 'permanent' as const;
}

/** True for any classified provider error. */
export function isProviderError(error: unknown): error is ProviderError {
  return error instanceof ProviderError;
}
