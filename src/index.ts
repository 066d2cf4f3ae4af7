/**
 * The public API of sandbox-fleet for app code (what `import … from 'sandbox-fleet'` gives):
 * the typed producer client, configuration, the migration-time dual-read file store, the job
 * payload and result types, and the fleet's typed errors. Worker internals are not exported.
 */
export { createFleetClient, DEFAULT_WAIT_MS } from './producers/fleet-client.js';
export { connectFleetClient } from './producers/connect-fleet-client.js';
export type { Enqueued, EnqueueCall, FleetClient, FleetClientOptions, ProvisionInput, WaitOptions, Waited } from './producers/fleet-client.js';
export { createFleetHttpClient } from './client/fleet-http-client.js';
export type {
  DiffAnswer,
  EventsOptions,
  ExecAnswer,
  ExecInput,
  FleetHttpClient,
  FleetHttpClientOptions,
  HistoryAnswer,
  HttpEnqueueCall,
  HttpEnqueued,
  HttpWaited,
  HttpWaitOptions,
  JobView,
  PersistBody,
  ProvisionBody,
  RemoveAnswer,
  ResetAnswer,
  RestoreAnswer,
  Revisions,
  RollbackBody,
  TreeAnswer,
  WorkspaceList,
  WorkspaceView,
  WriteAnswer,
} from './client/fleet-http-client.js';
export type { FleetEvent, FleetEventType } from './state/fleet-event.js';
export type { ExecEvent } from './http/exec-events.js';
export type { TurnInput, TurnResult } from './producers/turns.js';
export type { CheckpointView, RejectCheckpointInput, RejectCheckpointResult } from './producers/reject-checkpoint.js';
export { loadConfig, CONFIG_VARIABLES } from './config.js';
export type { Config } from './config.js';

export { MigratingFileStore, READ_MISS_PRIORITY } from './backfill/migrating-file-store.js';
export type { MigratingFileStoreConnectOptions, MigratingFileStoreOptions } from './backfill/migrating-file-store.js';
export { BlobLegacySource } from './backfill/blob-legacy-source.js';
export { decodeBlobName, encodeBlobName } from './backfill/blob-name.js';
export type { BackfillSource, LegacyFile, LegacySource, LegacyWorkspace, SkippedEntry, WorkspacePage } from './backfill/legacy-source.js';
export type { BackfillResult } from './backfill/backfill-workspace.js';
export type { SweepResult } from './backfill/run-sweep.js';
export type { SweepStats } from './state/sweep-state.js';
export type { MigrationRecord } from './state/migration-store.js';

export type {
  BackfillInput,
  BackfillPayload,
  BakeInput,
  GcInput,
  PersistInput,
  PersistReason,
  PersistResult,
  ProvisionResult,
  QueueName,
  RollbackInput,
  RollbackResult,
} from './queues/index.js';

export * from './errors/index.js';
export { ChecksumMismatchError } from './errors/checksum-mismatch-error.js';
export { BackfillDeferredError } from './errors/backfill-deferred-error.js';
export { SweepLeaseError } from './errors/sweep-lease-error.js';
export { LegacyFileVanishedError } from './errors/legacy-file-vanished-error.js';
export { SnapshotUnavailableError } from './providers/snapshot-unavailable-error.js';
export { CheckpointNotFoundError } from './state/checkpoint-store.js';
