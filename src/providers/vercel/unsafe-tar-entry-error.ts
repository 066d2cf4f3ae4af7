import { FleetError } from '../../errors/fleet-error.js';

/** Thrown when a tree archive holds an entry that would land outside its directory. Never retried. */
export class UnsafeTarEntryError extends FleetError {
  readonly code = 'UnsafeTarEntry';
  readonly retryable = false;

  constructor(entryPath: string, reason: string) {
    super(`unsafe archive entry ${JSON.stringify(entryPath)}: ${reason}`, { context: { entryPath, reason } });
  }
}
