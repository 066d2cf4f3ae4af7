import { StorageError } from './storage-error.js';

/** Thrown when a filesystem is mounted read-only (EROFS), e.g. after the kernel remounted it on errors. Retried with backoff; nothing was committed. */
export class ReadOnlyStorageError extends StorageError {
  readonly code = 'ReadOnlyStorage';
  readonly retryable = true;
}
