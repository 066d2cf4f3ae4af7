import { randomBytes } from 'node:crypto';
import { rename } from 'node:fs/promises';
import { removeTree } from '../../tree/remove-tree.js';
import { classifyFsError } from './classify-fs-error.js';
import { handlePaths, type LocalHost } from './handle-paths.js';
import { removeFile } from './remove-file.js';
import { readSandboxMeta } from './sandbox-meta.js';
import { withWorkspaceLock } from './workspace-lock.js';

export interface DestroySandboxDeps extends LocalHost {
  /** Deadline of the workspace lock. */
  readonly copyTimeoutMs: number;
}

/** Removes the incarnation named by the handle: its meta, its marker, then its tree (by handles). */
export async function destroySandbox(deps: DestroySandboxDeps, handle: string, signal: AbortSignal): Promise<void> {
  const { paths } = handlePaths(deps, handle, 'destroy');
  await withWorkspaceLock(paths.meta, signal, deps.copyTimeoutMs, async () => {
    const meta = await readSandboxMeta(paths).catch(() => null);
    // Only the incarnation named by the handle is destroyed, never a newer one living here.
    if (!meta || meta.handle !== handle) return;
    await removeFile(paths.sandbox);
    await removeFile(paths.ready);
    const doomed = paths.staging(`destroy-${randomBytes(3).toString('hex')}`);
    await rename(paths.root, doomed).catch(() => undefined);
    await removeTree(doomed);
  }).catch((error: unknown) => {
    throw classifyFsError(error, 'destroy');
  });
}
