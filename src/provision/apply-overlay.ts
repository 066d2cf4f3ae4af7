/**
 * The template overlay of a workspace's base (manifest `overlay`), written into a sandbox just
 * created from the base, before its ready marker: bounded by FLEET_BASE_OVERLAY_MAX_BYTES as
 * configured where it is applied. Any failure is an `OverlayFailed` (not retried): the workspace
 * becomes `error`, never `ready`, and the provisioner keeps the sandbox for debugging.
 */
import { OverlayFailedError } from '../errors/overlay-failed-error.js';
import { overlayBytes } from '../queues/base-manifest.js';
import type { SandboxProvider } from '../providers/sandbox-provider.js';
import type { BaseRegistry } from '../state/base-registry.js';

export interface ApplyOverlayDeps {
  readonly bases: Pick<BaseRegistry, 'overlay'>;
  readonly maxBytes: number;
}

/** Writes the overlay of `snapshotId` into `handle`; returns the files written. */
export async function applyOverlay(deps: ApplyOverlayDeps, provider: SandboxProvider, target: { workspaceId: string; snapshotId: string; handle: string }, signal: AbortSignal): Promise<number> {
  const context = { workspaceId: target.workspaceId, snapshotId: target.snapshotId, handle: target.handle };
  let files;
  try {
    files = await deps.bases.overlay(target.snapshotId);
  } catch (error) {
    throw new OverlayFailedError(`the overlay of base ${target.snapshotId} cannot be read`, { context, cause: error });
  }
  if (files.length === 0) return 0;
  const bytes = overlayBytes(files);
  if (bytes > deps.maxBytes) {
    throw new OverlayFailedError(`the overlay of base ${target.snapshotId} is ${bytes} bytes, over FLEET_BASE_OVERLAY_MAX_BYTES (${deps.maxBytes})`, { context: { ...context, bytes, limit: deps.maxBytes } });
  }
  try {
    await provider.writeFiles(target.handle, files.map((f) => ({ path: f.path, content: Buffer.from(f.content), mode: f.mode })), signal);
  } catch (error) {
    throw new OverlayFailedError(`the overlay of base ${target.snapshotId} could not be written into ${target.handle}`, { context, cause: error });
  }
  return files.length;
}
