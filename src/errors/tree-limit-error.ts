import { FleetError } from './fleet-error.js';

/** Which limit a refused entry crossed. */
export type TreeLimit = 'depth' | 'path-bytes' | 'entries' | 'file-bytes' | 'fifos' | 'unreadable';

/**
 * One entry of a live tree that a persist refused (too deep, path too long, over the entry or
 * file-size limit, unreadable). The rest of the tree is archived; the refused path keeps what the
 * previous revision had there. Reported in the persist result and logged; never retried.
 */
export class TreeLimitError extends FleetError {
  readonly code = 'TreeLimit';
  readonly retryable = false;
  readonly limit: TreeLimit;
  /** The refused path, relative to the tree root (encoded like manifest paths). */
  readonly path: string;

  constructor(limit: TreeLimit, path: string, detail: string) {
    super(`${path}: ${detail}`, { context: { limit, path } });
    this.limit = limit;
    this.path = path;
  }
}
