import { StorageError } from './storage-error.js';

/** Thrown when a rename or link would cross filesystems (EXDEV): the archive layout spans devices, a configuration error. Never retried. */
export class CrossDeviceError extends StorageError {
  readonly code = 'CrossDevice';
  readonly retryable = false;
}
