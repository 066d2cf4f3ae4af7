import { StorageError } from './storage-error.js';

/** Thrown when a path or name exceeds the filesystem limits (ENAMETOOLONG). Never retried. */
export class NameTooLongError extends StorageError {
  readonly code = 'NameTooLong';
  readonly retryable = false;
}
