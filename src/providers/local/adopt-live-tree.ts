import { chownTree } from '../../tree/chown-tree.js';
import type { LocalHost } from './handle-paths.js';
import type { LivePaths } from './live-paths.js';
import type { LocalSandboxing } from './local-sandboxing.js';
import { openLiveRoot } from './open-live-root.js';
import { ownSandbox } from './own-sandbox.js';
import { writeSandboxMeta } from './sandbox-meta.js';
import { withWorkspaceLock } from './workspace-lock.js';

export interface AdoptLiveTreeDeps extends LocalHost {
  /** Deadline of the workspace lock. */
  readonly copyTimeoutMs: number;
  readonly sandboxing: LocalSandboxing;
}

/** Gives a live tree made without isolation to its workspace's uid (a fleet that turned isolation on); returns that uid. */
export async function adoptLiveTree(deps: AdoptLiveTreeDeps, handle: string, paths: LivePaths, signal: AbortSignal): Promise<number> {
  return withWorkspaceLock(paths.meta, signal, deps.copyTimeoutMs, async () => {
    const { meta } = await ownSandbox(deps, handle, 'exec');
    if (meta.uid !== undefined) return meta.uid;
    const uid = await deps.sandboxing.uidFor(meta.workspaceId);
    const root = await openLiveRoot(paths, 'exec');
    try {
      await chownTree(root, uid, uid);
      await root.chmod(0o700);
    } finally {
      await root.close();
    }
    await writeSandboxMeta(paths, { ...meta, uid });
    return uid;
  });
}
