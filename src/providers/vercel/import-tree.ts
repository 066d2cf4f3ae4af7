import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RECORD_SUFFIX } from '../../archive/archive-paths.js';
import { materializeRevision } from '../../archive/materialize-revision.js';
import { ObjectStore } from '../../archive/object-store.js';
import { parseRevisionRecord } from '../../archive/revision-record.js';
import { DirHandle } from '../../tree/dir-handle.js';
import { removeTree } from '../../tree/remove-tree.js';
import type { Sandbox } from '@vercel/sandbox';
import { clearReady } from './ready-marker.js';
import { MAX_ARCHIVE_BYTES, PACK_TIMEOUT_MS, packTree } from './pack-tree.js';
import { packRevisionObjects } from './pack-revision.js';
import { ProviderBusyError } from '../provider-errors.js';
import { deadlineSignal } from '../../lib/any-signal.js';
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
export async function importTree(sandbox: Sandbox, from: string, signal: AbortSignal, systemPath = '/usr/bin:/bin'): Promise<void> {
  await clearReady(sandbox, signal);
  const archive = from.endsWith(RECORD_SUFFIX) ? await packRevision(from, signal, systemPath) : await packTree(from, signal, systemPath);
  const name = `${FLEET_DIR}/import-${randomUUID()}.tgz`;
  await sandbox.writeFiles([{ path: sandboxPath(name), content: archive, mode: 0o600 }], { signal });
  await runScript(sandbox, { operation: 'importTree', script: IMPORT_SCRIPT, args: [name], signal });
}

/**
 * Packs a format 2 revision (its record at `from`, `{archiveRoot}/{ws}/revs/{revision}.rev.json`):
 * straight from its trees and objects (pack-revision.ts); a revision that packer cannot write
 * exactly (a name that is not UTF-8) is materialized into a private temporary directory and packed
 * by the host's `tar`.
 */
async function packRevision(from: string, signal: AbortSignal, systemPath: string): Promise<Buffer> {
  const record = parseRevisionRecord(await readFile(from), from);
  const store = new ObjectStore(path.dirname(path.dirname(path.dirname(from))));
  const deadline = deadlineSignal(signal, PACK_TIMEOUT_MS);
  const packed = await packRevisionObjects(store, record.root, { maxBytes: MAX_ARCHIVE_BYTES }, deadline).catch((error: unknown) => {
    if (!deadline.aborted) throw error;
    throw new ProviderBusyError('vercel', 'importTree', 'packing the revision timed out', { cause: error, context: { from } });
  });
  if (packed) return packed;
  const dir = await mkdtemp(path.join(tmpdir(), 'fleet-vercel-import-'));
  try {
    const dest = await DirHandle.open(dir);
    try {
      await materializeRevision(store, record.root, dest, { systemPath, signal });
    } finally {
      await dest.close();
    }
    return await packTree(dir, signal, systemPath);
  } finally {
    await removeTree(dir);
  }
}
