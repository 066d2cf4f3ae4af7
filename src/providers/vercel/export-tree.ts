import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { Sandbox } from '@vercel/sandbox';
import { ProviderBusyError } from '../provider-errors.js';
import type { TreeSource } from '../sandbox-provider.js';
import { removeTree } from '../../tree/remove-tree.js';
import { extractTree } from './extract-tree.js';
import { runScript } from './run-script.js';
import { EXPORT_OK_EXIT_CODES, EXPORT_SCRIPT, REMOVE_SCRIPT } from './tree-scripts.js';
import { FLEET_DIR, sandboxPath } from './vercel-paths.js';

/**
 * Copies the sandbox's tree into a fresh local temp directory. The SDK has no directory download,
 * so `tar` runs in the sandbox, the archive is streamed back with the SDK's file read and unpacked
 * by `extractTree` (which trusts nothing in it). The archive in the sandbox is removed afterwards.
 */
export async function exportTree(sandbox: Sandbox, signal: AbortSignal): Promise<TreeSource> {
  const archive = `${FLEET_DIR}/export-${randomUUID()}.tgz`;
  const dir = await mkdtemp(path.join(tmpdir(), 'fleet-vercel-tree-'));
  // By handles: the extracted tree is the sandbox's (deep, odd names), and fs.rm stops at PATH_MAX.
  const release = () => removeTree(dir);
  try {
    await runScript(sandbox, { operation: 'openTree', script: EXPORT_SCRIPT, args: [archive], signal, okExitCodes: EXPORT_OK_EXIT_CODES });
    const stream = await sandbox.readFile({ path: sandboxPath(archive) }, { signal });
    // The archive was written a moment ago: a vanished one means the session was reset under us.
    if (stream === null) throw new ProviderBusyError('vercel', 'openTree', 'the tree archive vanished before it was read', { context: { archive } });
    await pipeline(stream, createGunzip(), async (source: AsyncIterable<Buffer>) => {
      await extractTree(source, dir);
    });
    return { path: dir, release };
  } catch (error) {
    await release();
    throw error;
  } finally {
    // Best effort: a leftover archive only costs space in .fleet, never correctness.
    if (!signal.aborted) await runScript(sandbox, { operation: 'openTree', script: REMOVE_SCRIPT, args: [archive], signal }).catch(() => undefined);
  }
}
