import { StorageError } from './storage-error.js';

/** Thrown when a filesystem has no space or quota left (ENOSPC, EDQUOT). Retried: GC or an operator may free space; nothing was committed. */
export class DiskFullError extends StorageError {
  readonly code = 'DiskFull';
  readonly retryable = true;
}
