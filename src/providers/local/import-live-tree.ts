/**
 * `importTree` (restore): an archive revision becomes the live tree. It is built in a fresh
 * staging tree (a format 2 record is materialized from the object store, a format 1 revision
 * directory is rsynced), given to the workspace's uid and swapped in, under the workspace lock
 * and with the ready marker cleared first.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { RECORD_SUFFIX } from '../../archive/archive-paths.js';
import { fsyncDir } from '../../archive/fsync.js';
import { RsyncError } from '../../rsync/rsync-error.js';
import { snapshotArgs } from '../../rsync/rsync-args.js';
import { runRsync } from '../../rsync/run-rsync.js';
import { removeTree } from '../../tree/remove-tree.js';
import { classifyFsError } from './classify-fs-error.js';
import { giveTreeTo } from './give-tree-to.js';
import { handlePaths, type LocalHost } from './handle-paths.js';
import { checkImportSource } from './local-ids.js';
import type { LocalSandboxing } from './local-sandboxing.js';
import { materializeRecord, type MaterializeRecordDeps } from './materialize-record.js';
import { ownSandbox } from './own-sandbox.js';
import { removeFile } from './remove-file.js';
import { writeSandboxMeta } from './sandbox-meta.js';
import { swapInTree } from './swap-in-tree.js';
import { withWorkspaceLock } from './workspace-lock.js';

export interface ImportLiveTreeDeps extends LocalHost, MaterializeRecordDeps {
  /** The archive root: only committed revisions beneath it are read. */
  readonly archiveRoot: string;
  readonly sandboxing: LocalSandboxing;
  /** Counts the exit code of each restore's rsync (metrics). */
  readonly onRsyncExit?: ((exitCode: number) => void) | undefined;
}

export async function importLiveTree(deps: ImportLiveTreeDeps, handle: string, from: string, signal: AbortSignal): Promise<void> {
  const { paths, workspaceId } = handlePaths(deps, handle, 'importTree');
  await checkImportSource(deps.archiveRoot, workspaceId, from);
  await withWorkspaceLock(paths.meta, signal, deps.copyTimeoutMs, async () => {
    const { meta } = await ownSandbox(deps, handle, 'importTree');
    const uid = (await deps.sandboxing.isolation()).mode === 'namespaces' ? (meta.uid ?? (await deps.sandboxing.uidFor(workspaceId))) : undefined;
    await removeFile(paths.ready);
    // The marker's removal is durable before the swap changes the live tree: its fsync runs
    // while the staging tree (which nothing reads yet) is made.
    const markerGone = fsyncDir(paths.meta);
    markerGone.catch(() => undefined);
    const staging = paths.staging(`restore-${randomBytes(3).toString('hex')}`);
    try {
      await mkdir(staging, { mode: 0o700 });
      if (from.endsWith(RECORD_SUFFIX)) {
        // Owned by the workspace's uid as each entry is made (no second walk).
        await materializeRecord(deps, { workspaceId, from, staging, uid, signal });
      } else {
        // No --link-dest: the live tree must never share inodes with the archive.
        const run = await runRsync({
          args: snapshotArgs({ source: from, dest: staging, ioTimeoutS: Math.max(30, Math.ceil(deps.copyTimeoutMs / 1000)) }),
          operation: 'restore',
          timeoutMs: deps.copyTimeoutMs,
          signal,
          path: deps.systemPath,
        }).catch((error: unknown) => {
          if (error instanceof RsyncError) deps.onRsyncExit?.(error.exitCode);
          throw error;
        });
        deps.onRsyncExit?.(run.exitCode);
      }
      // Archived files are root's; restored ones belong to the workspace's uid.
      if (!from.endsWith(RECORD_SUFFIX)) await giveTreeTo(staging, uid);
      await markerGone;
      await swapInTree(paths, staging);
      if (uid !== undefined && meta.uid !== uid) await writeSandboxMeta(paths, { ...meta, uid });
    } catch (error) {
      await removeTree(staging).catch(() => undefined);
      throw classifyFsError(error, 'importTree');
    }
  });
}
