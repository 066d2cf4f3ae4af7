import { readFile } from 'node:fs/promises';
import { extractRevision } from '../../archive/extract-revision.js';
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
  /** Restore through the host's tar (extract-revision.ts); false: materialise every file from Node. @default true */
  readonly restoreViaTar?: boolean | undefined;
  /** Told when a restore through tar failed and the revision was materialised instead (tar's exit and stderr). */
  readonly onRestoreTarFailure?: ((failure: string) => void) | undefined;
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
    const options = {
      systemPath: deps.systemPath,
      signal: deadlineSignal(signal, deps.copyTimeoutMs),
      ...(uid === undefined ? {} : { owner: { uid, gid: uid } }),
    };
    if (deps.restoreViaTar === false) await materializeRevision(deps.objects(), record.root, dest, options);
    else {
      const extracted = await extractRevision(deps.objects(), record.root, dest, { ...options, timeoutMs: deps.copyTimeoutMs });
      if (extracted.tarFailure !== undefined) deps.onRestoreTarFailure?.(extracted.tarFailure);
    }
    // The staging root is private until it is swapped in (as giveTreeTo leaves it).
    if (uid !== undefined) await dest.chmod(0o700);
  } finally {
    await dest.close();
  }
}
