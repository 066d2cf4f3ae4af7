/**
 * The ready marker (`meta/ready.json`, outside the tree): written only after a complete
 * restore, for the generation of the incarnation living here; persist refuses to run without it.
 */
import { readFile } from 'node:fs/promises';
import { fsyncDir } from '../../archive/fsync.js';
import { ProviderPermanentError } from '../provider-errors.js';
import type { ReadyMarker } from '../sandbox-provider.js';
import { classifyFsError } from './classify-fs-error.js';
import { handlePaths, type LocalHost } from './handle-paths.js';
import { ownSandbox } from './own-sandbox.js';
import { removeFile } from './remove-file.js';
import { withWorkspaceLock } from './workspace-lock.js';
import { writeDurable } from './write-durable.js';

export interface ReadyMarkerDeps extends LocalHost {
  /** Deadline of the workspace lock. */
  readonly copyTimeoutMs: number;
}

export async function markReady(deps: ReadyMarkerDeps, handle: string, marker: ReadyMarker, signal: AbortSignal): Promise<void> {
  const { paths } = handlePaths(deps, handle, 'markReady');
  await withWorkspaceLock(paths.meta, signal, deps.copyTimeoutMs, async () => {
    const { meta } = await ownSandbox(deps, handle, 'markReady');
    if (marker.generation !== meta.generation) throw new ProviderPermanentError('local', 'markReady', `marker generation ${marker.generation} does not match ${handle}`);
    await writeDurable(paths.ready, JSON.stringify(marker));
  }).catch((e: unknown) => {
    throw classifyFsError(e, 'markReady');
  });
}

/** The marker; null when there is none or it is unreadable (one that does not parse counts as none). */
export async function readReady(host: LocalHost, handle: string): Promise<ReadyMarker | null> {
  const { paths } = await ownSandbox(host, handle, 'readReady');
  try {
    return JSON.parse(await readFile(paths.ready, 'utf8')) as ReadyMarker;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if (error instanceof SyntaxError) return null;
    throw classifyFsError(error, 'readReady');
  }
}

export async function clearReady(deps: ReadyMarkerDeps, handle: string, signal: AbortSignal): Promise<void> {
  const { paths } = handlePaths(deps, handle, 'clearReady');
  await withWorkspaceLock(paths.meta, signal, deps.copyTimeoutMs, async () => {
    await ownSandbox(deps, handle, 'clearReady');
    await removeFile(paths.ready);
    await fsyncDir(paths.meta);
  });
}
