import { FleetError, type FleetErrorOptions } from './fleet-error.js';

/** Where a filesystem call failed: the operation, the path (for people) and the errno code. */
export interface StorageFailure {
  readonly operation: string;
  readonly path: string;
  readonly errno: string;
}

/**
 * Base of the typed filesystem failures (disk full, read-only, cross-device, name too long,
 * symlink loop, I/O error): each carries the operation, the path and the errno code, and says
 * itself whether retrying can help. Built from an errno in one place (`classifyStorageError`).
 */
export abstract class StorageError extends FleetError {
  readonly operation: string;
  readonly path: string;
  readonly errno: string;

  constructor(failure: StorageFailure, what: string, options: FleetErrorOptions = {}) {
    super(`${failure.operation} ${failure.path}: ${what} (${failure.errno})`, { ...options, context: { ...failure, ...(options.context ?? {}) } });
    this.operation = failure.operation;
    this.path = failure.path;
    this.errno = failure.errno;
  }
}
