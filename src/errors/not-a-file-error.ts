import { FleetError } from './fleet-error.js';

/** A file operation met something that is not a regular file there (a directory, a symlink, a FIFO). 409. */
export class NotAFileError extends FleetError {
  readonly code = 'NotAFile';
  readonly retryable = false;

  constructor(workspaceId: string, path: string, found: string) {
    super(`workspace ${workspaceId}: ${path} is ${found}, not a regular file`, { context: { workspaceId, path, found } });
  }
}
