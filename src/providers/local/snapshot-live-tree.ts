/**
 * `snapshot`: a base snapshot directory `{snapshotRoot}/{snapshotId}/tree` copied from the live
 * tree by handles like a persist (never `cp -a`, which re-resolves paths a sandbox can swap).
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { buildRevisionTree } from '../../archive/build-revision-tree.js';
import { removeTree } from '../../tree/remove-tree.js';
import { DEFAULT_TREE_LIMITS, type TreeLimits } from '../../tree/tree-limits.js';
import { ProviderBusyError } from '../provider-errors.js';
import { classifyFsError } from './classify-fs-error.js';
import type { LocalHost } from './handle-paths.js';
import { ownSandbox } from './own-sandbox.js';
import { writeDurable } from './write-durable.js';
import { anySignal } from '../../lib/any-signal.js';

export interface SnapshotLiveTreeDeps extends LocalHost {
  readonly snapshotRoot: string;
  readonly systemPath: string;
  /** Deadline of the copy. */
  readonly copyTimeoutMs: number;
  /** What a snapshot takes from a live tree. @default DEFAULT_TREE_LIMITS */
  readonly treeLimits?: TreeLimits | undefined;
}

export async function snapshotLiveTree(deps: SnapshotLiveTreeDeps, handle: string, signal: AbortSignal): Promise<{ snapshotId: string; expiresAt: null }> {
  const { paths, meta } = await ownSandbox(deps, handle, 'snapshot');
  const snapshotId = `snap-${meta.workspaceId}-g${meta.generation}-${randomBytes(4).toString('hex')}`;
  const dir = path.join(deps.snapshotRoot, snapshotId);
  const deadline = AbortSignal.timeout(deps.copyTimeoutMs);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // The live tree is copied by handles like a persist (never `cp -a`, which re-resolves paths a sandbox can swap).
    const copy = await buildRevisionTree({
      source: paths.root,
      dest: path.join(dir, 'tree'),
      basis: null,
      keepMissing: false,
      limits: deps.treeLimits ?? DEFAULT_TREE_LIMITS,
      systemPath: deps.systemPath,
      signal: anySignal([signal, deadline]),
    }).catch((error: unknown) => Promise.reject(deadline.aborted ? new ProviderBusyError('local', 'snapshot', 'copy exceeded its deadline', { cause: error }) : error));
    if (copy.rootChanged) throw new ProviderBusyError('local', 'snapshot', 'the live tree was replaced while it was copied');
    await writeDurable(path.join(dir, 'snapshot.json'), JSON.stringify({ snapshotId, sourceHandle: handle, createdAt: Date.now() }));
    // A local snapshot is a directory of the host: it lives until it is deleted.
    return { snapshotId, expiresAt: null };
  } catch (error) {
    await removeTree(dir).catch(() => undefined);
    throw classifyFsError(error, 'snapshot');
  }
}
