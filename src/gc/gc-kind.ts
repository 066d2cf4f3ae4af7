/** One kind of garbage: how to find it (dry run) and how to remove it, in bounded batches. */
import type { InvalidId } from '../providers/id-rules.js';
import type { ArchiveStore } from '../archive/archive-store.js';
import type { BaseRegistry } from '../state/base-registry.js';
import type { Config } from '../config.js';
import type { SingleFlight } from '../locks/single-flight.js';
import type { Logger } from '../logger.js';
import type { FleetClient } from '../producers/fleet-client.js';
import type { ProviderRegistry } from '../providers/provider-registry.js';
import type { ActivityStore } from '../state/activity-store.js';
import type { AddressStore } from '../state/address-store.js';
import type { CheckpointStore } from '../state/checkpoint-store.js';
import type { PendingCreateStore } from '../state/pending-create-store.js';
import type { RuntimeStore } from '../state/runtime-store.js';
import type { StoreWriters } from '../state/store-writers.js';
import type { VerifyCursor } from '../state/verify-cursor.js';

export interface GcItem {
  /** What is collected (revision id, snapshot id, handle, path, workspace). */
  readonly id: string;
  readonly workspaceId?: string;
  readonly description: string;
  /** Bytes reclaimed by removing it (0 when not applicable). */
  readonly bytes: number;
}

/** What the GC kinds read and remove through (each kind uses a few of these). */
export interface GcDeps {
  readonly config: Pick<Config, 'archiveFormat' | 'deadlines' | 'idleTtlMs' | 'provider' | 'retention' | 'verify'>;
  readonly logger: Logger;
  readonly singleFlight: Pick<SingleFlight, 'using'>;
  readonly activity: Pick<ActivityStore, 'quiescent'>;
  readonly addresses: Pick<AddressStore, 'get' | 'idleSince' | 'known' | 'lastActivity'>;
  readonly archive: ArchiveStore;
  readonly bases: BaseRegistry;
  readonly checkpoints: CheckpointStore;
  /** Idle reaps are persists with reason `idle-reap`. */
  readonly client: Pick<FleetClient, 'persist'>;
  readonly pendingCreates: Pick<PendingCreateStore, 'isPending' | 'prune'>;
  readonly providers: Pick<ProviderRegistry, 'get' | 'all'>;
  readonly runtime: Pick<RuntimeStore, 'get'>;
  readonly storeWriters: StoreWriters;
  readonly verifyCursor: VerifyCursor;
}

export interface GcContext {
  readonly deps: GcDeps;
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
