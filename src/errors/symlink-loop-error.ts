import { StorageError } from './storage-error.js';

/** Thrown when a path the fleet addresses meets a symlink it refuses to follow (ELOOP). Never retried. */
export class SymlinkLoopError extends StorageError {
  readonly code = 'SymlinkLoop';
  readonly retryable = false;
}
