/**
 * `listTree` on Vercel: the sandbox's tree as listings, and the files a persist asks for
 * streamed from the sandbox straight into the archive's store (store-delta.ts), with no copy of
 * the tree on the host. The host keeps only the index of the file versions a revision holds
 * (listed-index.ts) and a lock, under the workspace's mirror directory (mirror-paths.ts):
 *
 * - `list` runs LIST_SCRIPT in the sandbox and parses what comes back without trusting it;
 * - `fetch` has the sandbox archive exactly the files asked for (DELTA_SCRIPT, with its second
 *   look) and stores those that are the version listed;
 * - `release` removes the transfer files left in the sandbox and the lock.
 *
 * Every call has the provider's deadline; what the persist builds from them is archive/listing-builder.ts.
 */
import { mkdir } from 'node:fs/promises';
import type { Sandbox } from '@vercel/sandbox';
import { classifyStorageError } from '../../errors/classify-storage-error.js';
import type { ListedEntry } from '../../tree/listing.js';
import type { TreeLimits } from '../../tree/tree-limits.js';
import type { ListedTree, TreeTransfer } from '../sandbox-provider.js';
import { fetchDelta } from './fetch-delta.js';
import { fetchListing } from './fetch-listing.js';
import { loadListedIndex, saveListedIndex } from './listed-index.js';
import { lockMirror } from './mirror-lock.js';
import { mirrorPaths } from './mirror-paths.js';
import { listedAtOneInstant } from './one-instant.js';
import { settled } from './plan-delta.js';
import { gunzipBounded } from './read-sandbox-file.js';
import { runScript } from './run-script.js';
import { storeDelta } from './store-delta.js';
import { REMOVE_SCRIPT } from './tree-scripts.js';
import { UnsafeTarEntryError } from './unsafe-tar-entry-error.js';

// Archive bytes allowed per file asked for beyond its size (headers, GNU long names).
const ARCHIVE_OVERHEAD_PER_FILE = 16 * 1024;

export interface ListTreeOptions {
  /** Where the per-workspace directories live (`Config.paths.vercelMirrorRoot`). */
  readonly root: string;
  readonly limits: TreeLimits;
  /** Runs one sandbox call with the provider's deadline and error classification. */
  readonly call: <T>(signal: AbortSignal, fn: (deadline: AbortSignal) => Promise<T>) => Promise<T>;
}

export async function listTree(sandbox: Sandbox, handle: string, options: ListTreeOptions): Promise<ListedTree> {
  const paths = mirrorPaths(options.root, handle);
  await onHost(paths.dir, async () => {
    await mkdir(options.root, { recursive: true, mode: 0o700 });
    await mkdir(paths.dir, { recursive: true, mode: 0o700 });
  });
  const unlock = await onHost(paths.lock, () => lockMirror(paths.lock));
  const leftovers: string[] = [];
  const totals = { listingBytes: 0, archiveBytes: 0, requestBytes: 0, files: 0, seededFiles: 0 };
  let full = true;
  return {
    list: (signal) =>
      options.call(signal, async (deadline) => {
        const listed = await fetchListing(sandbox, options.limits, deadline);
        leftovers.push(...listed.files);
        totals.listingBytes += listed.bytes;
        return {
          listing: listed.listing,
          settled: (entry: ListedEntry) => settled(entry.ctimeNs, listed.clockNs),
          oneInstant: listedAtOneInstant(listed.listing, listed.clockNs, listed.dirsMoved),
        };
      }),
    fetch: (wanted, sink, signal) =>
      options.call(signal, async (deadline) => {
        const delta = await fetchDelta(sandbox, wanted, options.limits, deadline);
        leftovers.push(...delta.files);
        let expected = 0;
        for (const entry of wanted) expected += entry.size + ARCHIVE_OVERHEAD_PER_FILE;
        const tooLarge = () => new UnsafeTarEntryError('(archive)', `more than the ${expected} bytes the files asked for can take`);
        const fetched = await storeDelta({
          source: gunzipBounded(delta.archive.chunks, expected + 1024 * 1024, tooLarge),
          wanted: new Map(wanted.map((entry) => [entry.key, entry])),
          restat: delta.restat,
          clockNs: delta.clockNs,
          sink,
          signal: deadline,
        });
        totals.archiveBytes += delta.archive.bytes() + delta.restatBytes;
        totals.requestBytes += delta.requestBytes;
        totals.files += fetched.stored.size;
        return fetched;
      }),
    async loadIndex(revision) {
      const index = await loadListedIndex(paths.listedIndex, { sandbox: handle, revision });
      if (index) full = false;
      return index;
    },
    saveIndex: (revision, index) => onHost(paths.listedIndex, () => saveListedIndex(paths.listedIndex, { sandbox: handle, revision }, index)),
    transfer: (): TreeTransfer => ({ ...totals, full }),
    async release() {
      try {
        // Best effort: a leftover transfer file only costs space in .fleet, never correctness.
        if (leftovers.length > 0) {
          await options.call(new AbortController().signal, (deadline) => runScript(sandbox, { operation: 'openTree', script: REMOVE_SCRIPT, args: leftovers, signal: deadline })).catch(() => undefined);
        }
      } finally {
        await unlock();
      }
    },
  };
}

// Host-side filesystem work: its errors become typed storage errors (fleet errors pass through).
async function onHost<T>(path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw classifyStorageError(error, 'vercel listed tree', path);
  }
}
