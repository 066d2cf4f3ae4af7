/** One kind of garbage: how to find it (dry run) and how to remove it, in bounded batches. */
import type { InvalidId } from '../providers/id-rules.js';
import type { FleetServices } from '../runtime/services.js';

export interface GcItem {
  /** What is collected (revision id, snapshot id, handle, path, workspace). */
  readonly id: string;
  readonly workspaceId?: string;
  readonly description: string;
  /** Bytes reclaimed by removing it (0 when not applicable). */
  readonly bytes: number;
}

export interface GcContext {
  readonly services: FleetServices;
  readonly limit: number;
  readonly now: number;
  readonly signal: AbortSignal;
  /**
   * Records an id read from Redis, a provider listing or the archive that broke its rule: it is
   * skipped (never passed to rm/destroy/deleteSnapshot), logged with its value and counted.
   */
  readonly skip: (invalid: InvalidId) => void;
  /** Adds facts about the run to the result's `report` (counts the items alone do not tell). */
  readonly note: (facts: Readonly<Record<string, number | string>>) => void;
}

export interface GcKindRunner {
  /** Candidates, at most `limit`. Never changes anything. */
  plan(ctx: GcContext): Promise<GcItem[]>;
  /** Removes (or enqueues the removal of) candidates; returns what was actually collected. */
  apply(ctx: GcContext, planned: readonly GcItem[]): Promise<GcItem[]>;
  /** A check, not a collection: its items are findings, a real run is its plan, nothing is removed. */
  readonly readOnly?: boolean;
}
