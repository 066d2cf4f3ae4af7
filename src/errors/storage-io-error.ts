import { StorageError } from './storage-error.js';

/** Thrown for any other failure of a filesystem call the fleet depends on (EIO, EACCES on the archive, ...). Retried. */
export class StorageIoError extends StorageError {
  readonly code = 'StorageIo';
  readonly retryable = true;
}
