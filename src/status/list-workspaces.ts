/**
 * The workspaces the fleet knows, by id, a page at a time (`GET /v1/workspaces`, `fleet workspace
 * list`): each with its generation, its address (null when it has no live sandbox) and its last
 * activity. `allows` narrows the listing (a workspace-limited API token sees its own only).
 */
import type { Address, AddressStore } from '../state/address-store.js';

export interface WorkspaceListing {
  readonly workspaces: { readonly workspaceId: string; readonly generation: number; readonly address: Address | null; readonly lastActivity: number | null }[];
  /** The last id of this page when more follow (pass it as `cursor`), else null. */
  readonly nextCursor: string | null;
}

export async function listWorkspaces(
  addresses: Pick<AddressStore, 'known' | 'get' | 'generation' | 'lastActivity'>,
  options: { readonly cursor?: string; readonly limit: number; readonly allows?: (workspaceId: string) => boolean },
): Promise<WorkspaceListing> {
  const allows = options.allows ?? (() => true);
  const ids = (await addresses.known()).filter((id) => allows(id) && (options.cursor === undefined || id > options.cursor));
  const page = ids.slice(0, options.limit);
  const workspaces = await Promise.all(
    page.map(async (workspaceId) => {
      const [address, generation, lastActivity] = await Promise.all([addresses.get(workspaceId), addresses.generation(workspaceId), addresses.lastActivity(workspaceId)]);
      return { workspaceId, generation, address, lastActivity };
    }),
  );
  return { workspaces, nextCursor: ids.length > options.limit ? page.at(-1)! : null };
}
