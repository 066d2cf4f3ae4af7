/** Every workspace the archive or Redis knows: what `fleet verify --all` and the scheduled verify cover. */
import { WORKSPACE_ID_PATTERN } from '../queues/payload.js';
import type { AddressStore } from '../state/address-store.js';
import type { ArchiveStore } from './archive-store.js';

export async function knownWorkspaces(archive: Pick<ArchiveStore, 'workspaces'>, addresses: Pick<AddressStore, 'known'>): Promise<string[]> {
  const fromRedis = (await addresses.known()).filter((id) => WORKSPACE_ID_PATTERN.test(id));
  return [...new Set([...(await archive.workspaces()), ...fromRedis])].sort();
}
