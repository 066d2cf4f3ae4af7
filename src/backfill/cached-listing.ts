/**
 * A sorted workspace listing reused between the pages of one sweep: listing a legacy store is
 * O(all workspaces), so paging it batch by batch would be quadratic. A first page (no cursor)
 * always lists afresh; later pages reuse a listing younger than `maxAgeMs`. A workspace added
 * meanwhile is picked up by the next sweep.
 */
export function cachedListing(load: () => Promise<string[]>, maxAgeMs = 10_000, now: () => number = Date.now): (fresh: boolean) => Promise<readonly string[]> {
  let cached: { at: number; ids: readonly string[] } | null = null;
  return async (fresh) => {
    if (fresh || !cached || now() - cached.at > maxAgeMs) cached = { at: now(), ids: (await load()).sort() };
    return cached.ids;
  };
}
