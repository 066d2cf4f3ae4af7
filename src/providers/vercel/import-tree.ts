import { randomUUID } from 'node:crypto';
import type { Sandbox } from '@vercel/sandbox';
import { ExecaError } from 'execa';
import { ProviderBusyError, ProviderPermanentError } from '../provider-errors.js';
import { clearReady } from './ready-marker.js';
import { packTree } from './pack-tree.js';
import { runScript } from './run-script.js';
import { IMPORT_SCRIPT } from './tree-scripts.js';
import { FLEET_DIR, sandboxPath } from './vercel-paths.js';

/**
 * Replaces the sandbox's tree with the contents of the local directory `from`.
 *
 * Order: the ready marker is cleared first, so a restore that dies halfway leaves a sandbox that
 * persist refuses. `writeFiles` only carries regular files, so the tree travels as one tar.gz file
 * inside the SDK's upload (keeping symlinks, empty directories and modes) and is unpacked by `tar`
 * in the sandbox after the old tree's contents are deleted.
 */
export async function importTree(sandbox: Sandbox, from: string, signal: AbortSignal): Promise<void> {
  await clearReady(sandbox, signal);
  const archive = await packLocal(from, signal);
  const name = `${FLEET_DIR}/import-${randomUUID()}.tgz`;
  await sandbox.writeFiles([{ path: sandboxPath(name), content: archive, mode: 0o600 }], { signal });
  await runScript(sandbox, { operation: 'importTree', script: IMPORT_SCRIPT, args: [name], signal });
}

// Packs `from`, turning local tar failures into provider errors (a deadline is busy, the rest permanent).
async function packLocal(from: string, signal: AbortSignal): Promise<Buffer> {
  try {
    return await packTree(from, signal);
  } catch (error) {
    if (error instanceof ExecaError && (error.isCanceled || error.timedOut)) {
      throw new ProviderBusyError('vercel', 'importTree', 'packing the local tree timed out', { cause: error, context: { from } });
    }
    throw new ProviderPermanentError('vercel', 'importTree', 'cannot pack the local tree', { cause: error, context: { from } });
  }
}
