/**
 * The quota rule of a write through the API, pure: a write that would take the workspace's bytes
 * or files past a hard limit is refused; one that shrinks or keeps the usage always passes (so a
 * workspace over quota can always be cleaned up). Persists never call this (data first).
 */
import { QuotaExceededError } from '../errors/quota-exceeded-error.js';
import type { QuotaLimits, QuotaUsage } from '../state/quota-store.js';

export interface UsageDelta {
  readonly bytes: number;
  readonly files: number;
}

/** The usage change of writing `newSize` bytes where `oldSize` bytes were (null: nothing was there). */
export const writeDelta = (oldSize: number | null, newSize: number): UsageDelta => ({ bytes: newSize - (oldSize ?? 0), files: oldSize === null ? 1 : 0 });

/** Throws QuotaExceededError when `delta` grows a limited quantity past its limit. */
export function checkQuota(workspaceId: string, limits: QuotaLimits, usage: Pick<QuotaUsage, 'bytes' | 'files'> | null, delta: UsageDelta): void {
  const now = usage ?? { bytes: 0, files: 0 };
  if (limits.bytes > 0 && delta.bytes > 0 && now.bytes + delta.bytes > limits.bytes) throw new QuotaExceededError(workspaceId, 'bytes', now.bytes + delta.bytes, limits.bytes);
  if (limits.files > 0 && delta.files > 0 && now.files + delta.files > limits.files) throw new QuotaExceededError(workspaceId, 'files', now.files + delta.files, limits.files);
}
