import { readFile } from 'node:fs/promises';
import { materializeRevision } from '../../archive/materialize-revision.js';
import type { ObjectStore } from '../../archive/object-store.js';
import { parseRevisionRecord } from '../../archive/revision-record.js';
import { DirHandle } from '../../tree/dir-handle.js';
import { ProviderPermanentError } from '../provider-errors.js';
import { deadlineSignal } from '../../lib/any-signal.js';

export interface MaterializeRecordDeps {
  readonly objects: () => ObjectStore;
  readonly systemPath: string;
  /** Deadline of the whole restore. */
  readonly copyTimeoutMs: number;
}

/**
 * Restores a format 2 revision (its record at `from`) into the empty staging tree, owned by the
 * workspace's uid as each entry is made (undefined: no isolation).
 */
export async function materializeRecord(
  deps: MaterializeRecordDeps,
  { workspaceId, from, staging, uid, signal }: { workspaceId: string; from: string; staging: string; uid: number | undefined; signal: AbortSignal },
): Promise<void> {
  const record = parseRevisionRecord(await readFile(from), from);
  if (record.workspaceId !== workspaceId) throw new ProviderPermanentError('local', 'importTree', `${from} is a revision of ${record.workspaceId}, not of ${workspaceId}`);
  const dest = await DirHandle.open(staging);
  try {
    await materializeRevision(deps.objects(), record.root, dest, {
      systemPath: deps.systemPath,
      signal: deadlineSignal(signal, deps.copyTimeoutMs),
      ...(uid === undefined ? {} : { owner: { uid, gid: uid } }),
    });
    // The staging root is private until it is swapped in (as giveTreeTo leaves it).
    if (uid !== undefined) await dest.chmod(0o700);
  } finally {
    await dest.close();
  }
}
