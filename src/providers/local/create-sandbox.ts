/**
 * `create`: a new incarnation in the workspace's live directory, from an empty tree or a copy
 * of a base snapshot (`cp --reflink=auto`, never hard links: an in-place write in the sandbox
 * must never reach the base), built in staging, given to the workspace's uid and swapped in.
 * No ready marker: a restore writes it.
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { runCommand } from '../../lib/run-command.js';
import { ProviderBusyError, ProviderGoneError, ProviderPermanentError } from '../provider-errors.js';
import type { CreateRequest } from '../sandbox-provider.js';
import { classifyFsError } from './classify-fs-error.js';
import { giveTreeTo } from './give-tree-to.js';
import type { LocalHost } from './handle-paths.js';
import { checkCreateRequest } from './local-ids.js';
import { treeUidFor, type LocalSandboxing } from './local-sandboxing.js';
import { livePaths, localHandle } from './live-paths.js';
import { removeFile } from './remove-file.js';
import { readSandboxMeta, writeSandboxMeta, type SandboxMeta } from './sandbox-meta.js';
import { swapInTree } from './swap-in-tree.js';
import { withWorkspaceLock } from './workspace-lock.js';

export interface CreateSandboxDeps extends LocalHost {
  readonly snapshotRoot: string;
  readonly systemPath: string;
  /** Deadline of the snapshot copy and of the workspace lock. */
  readonly copyTimeoutMs: number;
  readonly sandboxing: LocalSandboxing;
}

export async function createSandbox(deps: CreateSandboxDeps, { workspaceId, generation, source, signal }: CreateRequest): Promise<{ handle: string; hostId: string }> {
  checkCreateRequest({ workspaceId, generation, source });
  const handle = localHandle(deps.hostId, workspaceId, generation);
  const paths = livePaths(deps.liveRoot, workspaceId);
  const uid = await treeUidFor(deps.sandboxing, workspaceId);
  try {
    await mkdir(paths.meta, { recursive: true, mode: 0o700 });
    return await withWorkspaceLock(paths.meta, signal, deps.copyTimeoutMs, async () => {
      const existing = await readSandboxMeta(paths);
      if (existing && existing.generation > generation) {
        throw new ProviderGoneError('local', 'create', `generation ${generation} is superseded by ${existing.handle} on this host`);
      }
      await removeFile(paths.ready);
      const staging = paths.staging(`g${generation}-${randomBytes(3).toString('hex')}`);
      if (source.type === 'empty') {
        await mkdir(staging, { mode: 0o700 });
      } else {
        const tree = path.join(deps.snapshotRoot, source.snapshotId, 'tree');
        await lstat(tree).catch(() => {
          throw new ProviderPermanentError('local', 'create', `snapshot ${source.snapshotId} not found under ${deps.snapshotRoot}`);
        });
        const copy = await runCommand('cp', ['-a', '--reflink=auto', '--', tree, staging], { env: { PATH: deps.systemPath }, timeoutMs: deps.copyTimeoutMs, signal });
        if (copy.timedOut || copy.aborted) throw new ProviderBusyError('local', 'create', `copying snapshot ${source.snapshotId} exceeded its deadline`);
        if (copy.exitCode !== 0) throw new ProviderPermanentError('local', 'create', `cp of snapshot ${source.snapshotId} failed: ${copy.stderr.trim()}`);
      }
      await giveTreeTo(staging, uid);
      await swapInTree(paths, staging);
      const meta: SandboxMeta = { handle, workspaceId, generation, hostId: deps.hostId, state: 'running', createdAt: Date.now(), ...(uid === undefined ? {} : { uid }) };
      await writeSandboxMeta(paths, meta);
      return { handle, hostId: deps.hostId };
    });
  } catch (error) {
    throw classifyFsError(error, 'create');
  }
}
