/**
 * `exec`: one command in the workspace's live tree. Its cwd is opened beneath the tree's root
 * by handles (never following a symlink); under namespaced isolation the command runs in the
 * sandbox as the workspace's uid (run-sandboxed.ts), otherwise as the fleet's user.
 */
import { PayloadInvalidError } from '../../errors/payload-invalid-error.js';
import type { DirHandle } from '../../tree/dir-handle.js';
import { ProviderPermanentError } from '../provider-errors.js';
import type { ExecRequest, ExecResult } from '../sandbox-provider.js';
import { adoptLiveTree } from './adopt-live-tree.js';
import type { LocalHost } from './handle-paths.js';
import type { LocalSandboxing } from './local-sandboxing.js';
import { openLiveRoot } from './open-live-root.js';
import { ownSandbox } from './own-sandbox.js';
import { openDirBeneath } from './safe-path.js';
import { runSandboxed } from './run-sandboxed.js';
import { runUnsandboxed } from './run-unsandboxed.js';

export interface ExecInLiveTreeDeps extends LocalHost {
  readonly systemPath: string;
  /** Deadline of the workspace lock (adopting a tree made without isolation). */
  readonly copyTimeoutMs: number;
  readonly sandboxing: LocalSandboxing;
}

export async function execInLiveTree(deps: ExecInLiveTreeDeps, handle: string, request: ExecRequest): Promise<ExecResult> {
  const { paths, meta } = await ownSandbox(deps, handle, 'exec');
  const [file, ...args] = request.cmd;
  if (!file) throw new ProviderPermanentError('local', 'exec', 'empty command');
  const isolation = await deps.sandboxing.isolation();
  const uid = isolation.mode === 'namespaces' ? (meta.uid ?? (await adoptLiveTree(deps, handle, paths, request.signal))) : undefined;
  const root = await openLiveRoot(paths, 'exec');
  let cwdDir: DirHandle | null = null;
  try {
    if (request.cwd) {
      cwdDir = await openDirBeneath(root, request.cwd, { field: 'cwd' });
      if (!cwdDir) throw new PayloadInvalidError('path', [{ field: 'cwd', message: 'is not a directory of the workspace tree', value: request.cwd }]);
    }
    if (uid !== undefined) return await runSandboxed({ isolation, uid, root, request, systemPath: deps.systemPath });
    return await runUnsandboxed(file, args, (cwdDir ?? root).entry().toString(), request);
  } finally {
    await cwdDir?.close();
    await root.close();
  }
}
