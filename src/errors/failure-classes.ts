/**
 * The error classes a caller can get back from a failed job: a failure whose class is listed here
 * is rebuilt as that class (see `reviveFailure`), any other as a `RemoteJobError` with the same
 * code, retry intent and context. Keyed by class name, not code: `code` is an instance field, so
 * reading it would need an instance, and the constructors need arguments only the thrower has.
 * Every concrete class of `src/errors` is listed (test/unit/failure-codec.test.ts checks it);
 * classes defined in other layers decode as `RemoteJobError`.
 */
import type { FleetError } from './fleet-error.js';
import { BackfillDeferredError } from './backfill-deferred-error.js';
import { BakeFailedError } from './bake-failed-error.js';
import { BoardDisabledError } from './board-disabled-error.js';
import { ChecksumMismatchError } from './checksum-mismatch-error.js';
import { ConfigError } from './config-error.js';
import { CrossDeviceError } from './cross-device-error.js';
import { CrossOriginError } from './cross-origin-error.js';
import { DeadlineExceededError } from './deadline-exceeded-error.js';
import { DiskFullError } from './disk-full-error.js';
import { EmptySourceError } from './empty-source-error.js';
import { ExportFailedError } from './export-failed-error.js';
import { GcMarkIncompleteError } from './gc-mark-incomplete-error.js';
import { InvalidJsonError } from './invalid-json-error.js';
import { IsolationUnavailableError } from './isolation-unavailable-error.js';
import { JobCancelledError } from './job-cancelled-error.js';
import { JobDataUnreadableError } from './job-data-unreadable-error.js';
import { LegacyFileVanishedError } from './legacy-file-vanished-error.js';
import { MigrationMismatchError } from './migration-mismatch-error.js';
import { KeyMigrationRefusedError } from './key-migration-refused-error.js';
import { NameTooLongError } from './name-too-long-error.js';
import { NotImplementedError } from './not-implemented-error.js';
import { NotReadyError } from './not-ready-error.js';
import { OverlayFailedError } from './overlay-failed-error.js';
import { PayloadInvalidError } from './payload-invalid-error.js';
import { PayloadTooLargeError } from './payload-too-large-error.js';
import { QuotaExceededError } from './quota-exceeded-error.js';
import { FileNotFoundError } from './file-not-found-error.js';
import { ForbiddenError } from './forbidden-error.js';
import { JobNotFoundError } from './job-not-found-error.js';
import { NotAFileError } from './not-a-file-error.js';
import { WorkspaceBusyError } from './workspace-busy-error.js';
import { ReadOnlyStorageError } from './read-only-storage-error.js';
import { RedisUnavailableError } from './redis-unavailable-error.js';
import { RouteNotFoundError } from './route-not-found-error.js';
import { SandboxUidsExhaustedError } from './sandbox-uids-exhausted-error.js';
import { ShrinkGuardError } from './shrink-guard-error.js';
import { StaleGenerationError } from './stale-generation-error.js';
import { StorageIoError } from './storage-io-error.js';
import { SweepLeaseError } from './sweep-lease-error.js';
import { SymlinkLoopError } from './symlink-loop-error.js';
import { TreeChangedError } from './tree-changed-error.js';
import { TreeLimitError } from './tree-limit-error.js';
import { UnauthorizedError } from './unauthorized-error.js';
import { UnsafeListingError } from './unsafe-listing-error.js';
import { UnsupportedMediaTypeError } from './unsupported-media-type-error.js';
import { UpgradeFailedError } from './upgrade-failed-error.js';
import { UsageError } from './usage-error.js';
import { WaitTimeoutError } from './wait-timeout-error.js';
import { WorkspaceConflictError } from './workspace-conflict-error.js';
import { WorkspaceNotFoundError } from './workspace-not-found-error.js';

/** A concrete fleet error class, whatever its constructor takes. */
export type FailureClass = abstract new (...args: never[]) => FleetError;

/** The classes revived from the wire. */
export const FAILURE_CLASSES: readonly FailureClass[] = [
  BackfillDeferredError,
  BakeFailedError,
  BoardDisabledError,
  ChecksumMismatchError,
  ConfigError,
  CrossDeviceError,
  CrossOriginError,
  DeadlineExceededError,
  DiskFullError,
  EmptySourceError,
  ExportFailedError,
  GcMarkIncompleteError,
  InvalidJsonError,
  IsolationUnavailableError,
  JobCancelledError,
  JobDataUnreadableError,
  LegacyFileVanishedError,
  MigrationMismatchError,
  KeyMigrationRefusedError,
  NameTooLongError,
  NotImplementedError,
  NotReadyError,
  OverlayFailedError,
  PayloadInvalidError,
  PayloadTooLargeError,
  QuotaExceededError,
  FileNotFoundError,
  ForbiddenError,
  JobNotFoundError,
  NotAFileError,
  WorkspaceBusyError,
  ReadOnlyStorageError,
  RedisUnavailableError,
  RouteNotFoundError,
  SandboxUidsExhaustedError,
  ShrinkGuardError,
  StaleGenerationError,
  StorageIoError,
  SweepLeaseError,
  SymlinkLoopError,
  TreeChangedError,
  TreeLimitError,
  UnauthorizedError,
  UnsafeListingError,
  UnsupportedMediaTypeError,
  UpgradeFailedError,
  UsageError,
  WaitTimeoutError,
  WorkspaceConflictError,
  WorkspaceNotFoundError,
];

const BY_NAME: ReadonlyMap<string, FailureClass> = new Map(FAILURE_CLASSES.map((Class) => [Class.name, Class]));

/** The listed class called `name`, if any. */
export function failureClassNamed(name: string): FailureClass | undefined {
  return BY_NAME.get(name);
}
