/**
 * `fleet workspace reset`: the only way to start a known workspace over. The generation is
 * bumped first (fencing out every live incarnation), the live sandbox destroyed, Redis records
 * removed, and the archive moved aside to `{archiveRoot}/.reset/{ws}-{time}` (kept, never
 * deleted here: an operator can still recover it).
 */
import { mkdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { firstInvalidId } from '../lib/id-rules.js';
import type { FleetServices } from '../runtime/services.js';

export interface ResetResult {
  readonly workspaceId: string;
  readonly generation: number;
  readonly archiveMovedTo: string | null;
  readonly destroyed: string | null;
}

export async function resetWorkspace(services: FleetServices, workspaceId: string, signal: AbortSignal): Promise<ResetResult> {
  return services.singleFlight.using(`provision:${workspaceId}`, async () => {
    const address = await services.addresses.get(workspaceId);
    const floor = await services.archive.maxGeneration(workspaceId);
    const generation = await services.addresses.bumpGeneration(workspaceId, floor);
    let destroyed: string | null = null;
    if (address) {
      await services.client.stopCheckpoints(workspaceId).catch(() => undefined);
      // The handle is read back from Redis: only an incarnation of this workspace is destroyed.
      const invalid = firstInvalidId({ workspaceId, handle: address.handle });
      if (invalid) services.logger.warn({ workspaceId, ...invalid }, 'reset: the address names an invalid handle; not destroyed');
      else {
        await services.providerFor(address).destroy(address.handle, signal).catch(() => undefined);
        destroyed = address.handle;
      }
    }
    const { keys, redis } = services;
    const ids = await services.checkpoints.history(workspaceId, 100_000);
    const multi = redis.multi();
    for (const c of ids) multi.del(keys.checkpoint(c.id)).zrem(keys.unattached(), c.id);
    multi
      .del(keys.address(workspaceId), keys.head(workspaceId), keys.checkpoints(workspaceId), keys.persistIntent(workspaceId), keys.persistStatus(workspaceId), keys.runtime(workspaceId))
      .del(`${keys.prefix}:ws:${workspaceId}:attached`, `${keys.prefix}:ws:${workspaceId}:ckpt-index`)
      .hdel(keys.migrated(), workspaceId);
    await multi.exec();
    let archiveMovedTo: string | null = null;
    const dir = services.archive.paths(workspaceId).dir;
    const aside = path.join(services.archive.root, '.reset', `${workspaceId}-${new Date().toISOString().replace(/[:.]/g, '')}`);
    try {
      await mkdir(path.dirname(aside), { recursive: true, mode: 0o700 });
      await rename(dir, aside);
      archiveMovedTo = aside;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return { workspaceId, generation, archiveMovedTo, destroyed };
  });
}
