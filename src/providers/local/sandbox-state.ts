import { classifyFsError } from './classify-fs-error.js';
import { handlePaths, type LocalHost } from './handle-paths.js';
import { ownSandbox } from './own-sandbox.js';
import { writeSandboxMeta, type SandboxMeta } from './sandbox-meta.js';
import { withWorkspaceLock } from './workspace-lock.js';

export interface SandboxStateDeps extends LocalHost {
  /** Deadline of the workspace lock. */
  readonly copyTimeoutMs: number;
}

/** Records running/stopped (`resume` / `stop`) for the incarnation named by the handle. */
export async function setSandboxState(deps: SandboxStateDeps, handle: string, state: SandboxMeta['state'], operation: string, signal: AbortSignal): Promise<void> {
  const { paths } = handlePaths(deps, handle, operation);
  await withWorkspaceLock(paths.meta, signal, deps.copyTimeoutMs, async () => {
    const { meta } = await ownSandbox(deps, handle, operation);
    if (meta.state !== state) await writeSandboxMeta(paths, { ...meta, state });
  }).catch((e: unknown) => {
    throw classifyFsError(e, operation);
  });
}
