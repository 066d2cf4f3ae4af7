import { ProviderError } from './provider-errors.js';
import type { SnapshotStatus } from './sandbox-provider.js';

/**
 * Thrown when a provider-native snapshot (a base or a workspace snapshot) can no longer seed a
 * sandbox: it expired, was deleted at the provider or never existed there. Permanent: retrying
 * cannot bring it back (a base is baked again, a workspace restored from another source or reset).
 */
export class SnapshotUnavailableError extends ProviderError {
  readonly code = 'SnapshotUnavailable';
  readonly retryable = false;
  readonly classification = 'permanent' as const;
  readonly snapshotId: string;
  readonly status: Exclude<SnapshotStatus, 'usable'>;

  constructor(provider: string, operation: string, snapshotId: string, status: Exclude<SnapshotStatus, 'usable'>, options: { cause?: unknown } = {}) {
    super(provider, operation, `snapshot ${snapshotId} is ${status}`, { ...options, context: { snapshotId, status } });
    this.snapshotId = snapshotId;
    this.status = status;
  }
}
