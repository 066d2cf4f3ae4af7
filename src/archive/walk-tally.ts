/**
 * What a walk of a source tree counted: entries walked, vanished and refused (the first 100
 * refusals in full, as typed errors), skipped devices and sockets, setuid/setgid bits dropped,
 * hard links kept. Shared by the builders of both archive formats; reports progress.
 */
import { TreeLimitError, type TreeLimit } from '../errors/tree-limit-error.js';
import { encodePath } from './tree-walk.js';

/** Entries walked between two progress reports. */
const PROGRESS_EVERY = 2_000;
/** Refusals kept in full (the rest are only counted). */
const REFUSALS_KEPT = 100;

export class WalkTally {
  walked = 0;
  vanished = 0;
  hardLinks = 0;
  strippedModes = 0;
  refusedCount = 0;
  readonly refused: TreeLimitError[] = [];
  readonly skipped = { devices: 0, sockets: 0 };

  constructor(private readonly onProgress?: (walked: number) => void) {}

  /** Counts one source entry walked. */
  tick(): void {
    this.walked += 1;
    if (this.walked % PROGRESS_EVERY === 0) this.onProgress?.(this.walked);
  }

  /** Records an entry refused by a limit. */
  refuse(limit: TreeLimit, rel: Buffer, detail: string): void {
    this.refusedCount += 1;
    if (this.refused.length < REFUSALS_KEPT) this.refused.push(new TreeLimitError(limit, encodePath(rel), detail));
  }
}
