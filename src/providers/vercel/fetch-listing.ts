import { randomUUID } from 'node:crypto';
import type { Sandbox } from '@vercel/sandbox';
import { UnsafeListingError } from '../../errors/unsafe-listing-error.js';
import type { TreeLimits } from '../../tree/tree-limits.js';
import { parseListing, type Listing } from './parse-listing.js';
import { gunzipBounded, readSandboxFile } from './read-sandbox-file.js';
import { runScript } from './run-script.js';
import { COARSE_RACY_MARGIN_NS, SANDBOX_RACY_MARGIN_NS } from './plan-delta.js';
import { LIST_SCRIPT } from './tree-scripts.js';
import { FLEET_DIR } from './vercel-paths.js';

/**
 * Uncompressed listing bytes read at most: a million entries (the default entry limit) of
 * ordinary paths are about 150 MB; anything far beyond is not a listing of a usable tree.
 */
const MAX_LISTING_BYTES = 1024 ** 3;

export interface FetchedListing {
  readonly listing: Listing;
  /** Compressed bytes that crossed the SDK. */
  readonly bytes: number;
  /** Transfer files left in the sandbox (removed by the caller). */
  readonly files: readonly string[];
  /** The sandbox's clock (ns) before the listing began (the racily-clean rule of seeded files). */
  readonly clockNs: bigint;
  /**
   * Whether a directory changed (or may have) since the clock less each racily-clean margin, by
   * its ctime looked at after the walk: with none changed and every listed entry older, the
   * listing is the tree at one instant (see `listedAtOneInstant`).
   */
  readonly dirsMoved: { readonly fine: boolean; readonly coarse: boolean };
}

// stdout of LIST_SCRIPT: the clock, then whether directories moved since it, less each margin.
const LIST_STDOUT = /^(\d{1,20})\n([01])\n([01])\n$/;

/** Lists the sandbox's tree in the sandbox (`LIST_SCRIPT`) and reads the listing back. */
export async function fetchListing(sandbox: Sandbox, limits: TreeLimits, signal: AbortSignal): Promise<FetchedListing> {
  const file = `${FLEET_DIR}/list-${randomUUID()}.gz`;
  const files = [file, `${file}.raw`];
  const ran = await runScript(sandbox, { operation: 'openTree', script: LIST_SCRIPT, args: [file, String(SANDBOX_RACY_MARGIN_NS), String(COARSE_RACY_MARGIN_NS)], signal });
  const stdout = await ran.stdout();
  const clock = LIST_STDOUT.exec(stdout);
  if (!clock) throw new UnsafeListingError('the listing script printed something else than a clock and two flags', Buffer.from(stdout.slice(0, 200)));
  const stream = await readSandboxFile(sandbox, file, 'openTree', signal);
  const tooLarge = () => new UnsafeListingError(`the listing is over ${MAX_LISTING_BYTES} bytes uncompressed`, Buffer.alloc(0));
  const listing = await parseListing(gunzipBounded(stream.chunks, MAX_LISTING_BYTES, tooLarge), { limits });
  return { listing, bytes: stream.bytes(), files, clockNs: BigInt(clock[1]!), dirsMoved: { fine: clock[2] === '1', coarse: clock[3] === '1' } };
}
