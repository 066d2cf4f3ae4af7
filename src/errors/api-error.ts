import { FleetError } from './fleet-error.js';

/**
 * An error answer of the fleet's HTTP API whose class this package cannot rebuild (one of another
 * layer, or of a newer server): the answer's code, message, retry intent and HTTP status. The
 * HTTP client answers every error it can as its own class instead (see `reviveFailure`).
 */
export class ApiError extends FleetError {
  readonly code: string;
  readonly retryable: boolean;
  readonly status: number;

  constructor(status: number, code: string, message: string, options: { readonly retryable?: boolean; readonly context?: Readonly<Record<string, unknown>> } = {}) {
    super(message, { context: { status, ...(options.context ?? {}) } });
    this.status = status;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}
