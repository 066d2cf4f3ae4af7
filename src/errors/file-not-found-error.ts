import { FleetError } from './fleet-error.js';

/** A path a file operation names is not in the workspace (the live tree, or the revision read). 404. */
export class FileNotFoundError extends FleetError {
  readonly code = 'FileNotFound';
  readonly retryable = false;

  constructor(workspaceId: string, path: string, where: string) {
    super(`workspace ${workspaceId} has no ${path} (${where})`, { context: { workspaceId, path, where } });
  }
}
