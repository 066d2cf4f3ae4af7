/** One kind of garbage: how to find it (dry run) and how to remove it, in bounded batches. */
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
}

export interface GcKindRunner {
  /** Candidates, at most `limit`. Never changes anything. */
  plan(ctx: GcContext): Promise<GcItem[]>;
  /** Removes (or enqueues the removal of) candidates; returns what was actually collected. */
  apply(ctx: GcContext, planned: readonly GcItem[]): Promise<GcItem[]>;
}
