/**
 * Generation-fence violations of one workspace, read from outside once the fleet settled: an
 * attached checkpoint of an older generation after one of a newer (a fenced-out incarnation got
 * a revision attached), or a current revision of a generation above the published address's.
 * Each violation is one line describing it; none is an empty list.
 */
import type { ArchiveStore } from '../src/archive/archive-store.js';
import type { AddressStore } from '../src/state/address-store.js';
import type { CheckpointStore } from '../src/state/checkpoint-store.js';

export interface FenceDeps {
  readonly checkpoints: Pick<CheckpointStore, 'attachedIds' | 'get'>;
  readonly addresses: Pick<AddressStore, 'get'>;
  readonly archive: Pick<ArchiveStore, 'current' | 'readManifest'>;
}

export async function fenceViolations(deps: FenceDeps, ws: string): Promise<string[]> {
  const found: string[] = [];
  let previous = 0;
  for (const id of await deps.checkpoints.attachedIds(ws)) {
    const c = await deps.checkpoints.get(ws, id);
    if (!c) continue;
    if (c.generation < previous) found.push(`${ws}: attached ${c.workspaceRevision} of generation ${c.generation} after generation ${previous}`);
    previous = Math.max(previous, c.generation);
  }
  const current = await deps.archive.current(ws);
  const manifest = current ? await deps.archive.readManifest(ws, current) : null;
  const address = await deps.addresses.get(ws);
  if (manifest && address && manifest.generation > address.generation) found.push(`${ws}: current revision generation ${manifest.generation} > address generation ${address.generation}`);
  return found;
}
