/**
 * `openTree` on Vercel: brings the host's mirror of the sandbox's tree up to date, moving only
 * what changed, and hands it to what needs the tree as a host directory: a format 1 persist and
 * backfill (whose walk and stat cache then cost what changed too). A format 2 persist needs no
 * host copy: it lists the tree and fetches the changed files into the store (list-tree.ts).
 *
 *  1. lock the mirror (mirror-lock.ts) until the persist releases the tree;
 *  2. list the tree in the sandbox and read the listing back (the only transfer when nothing changed);
 *  3. walk the mirror against the listing: remove what the sandbox deleted (survey-mirror.ts),
 *     make directories, symlinks and FIFOs as listed (apply-listing.ts);
 *  4. decide which files the mirror lacks or cannot vouch for (plan-delta.ts), have the sandbox
 *     archive exactly those, and write them in (apply-delta.ts);
 *  5. record what the mirror now holds (mirror-index.ts).
 *
 * A mirror that is missing, from another boot of the host, another sandbox, or damaged (a copy
 * touched since the fleet wrote it, an update killed halfway) is corrected by the same steps:
 * whatever it cannot vouch for is transferred again, so at worst the persist is a full transfer.
 * Everything coming out of the sandbox is untrusted (the listing, the archive, the second look);
 * the mirror is changed only beneath its root's handle, and no symlink in it is ever followed.
 */
import { mkdir } from 'node:fs/promises';
import type { Sandbox } from '@vercel/sandbox';
import { classifyStorageError } from '../../errors/classify-storage-error.js';
import { UnsafeTarEntryError } from './unsafe-tar-entry-error.js';
import { bootId } from '../../lib/boot-id.js';
import { DirCursor } from '../../tree/dir-cursor.js';
import { DirHandle } from '../../tree/dir-handle.js';
import { removeEntry, removeTree } from '../../tree/remove-tree.js';
import type { TreeLimits } from '../../tree/tree-limits.js';
import type { TreeSource, TreeTransfer } from '../sandbox-provider.js';
import { applyDelta, type DeltaOutcome } from './apply-delta.js';
import { applyListing } from './apply-listing.js';
import { fetchDelta } from './fetch-delta.js';
import { fetchListing } from './fetch-listing.js';
import { loadMirrorIndex, saveMirrorIndex, type MirrorOwner } from './mirror-index.js';
import { lockMirror } from './mirror-lock.js';
import { mirrorPaths, type MirrorPaths } from './mirror-paths.js';
import { nextIndex, planDelta, type DeltaPlan } from './plan-delta.js';
import { gunzipBounded } from './read-sandbox-file.js';
import { runScript } from './run-script.js';
import { splitRelative } from './safe-relative.js';
import { surveyMirror, type MirrorSurvey } from './survey-mirror.js';
import { REMOVE_SCRIPT } from './tree-scripts.js';
import type { Listing } from './parse-listing.js';

export interface MirrorOptions {
  /** Where the mirrors live (`Config.paths.vercelMirrorRoot`). */
  readonly root: string;
  readonly limits: TreeLimits;
  /** PATH for host tools (mkfifo). */
  readonly systemPath: string;
}

// Archive bytes allowed per file asked for beyond its size (headers, GNU long names).
const ARCHIVE_OVERHEAD_PER_FILE = 16 * 1024;

export async function syncMirror(sandbox: Sandbox, handle: string, options: MirrorOptions, signal: AbortSignal): Promise<TreeSource> {
  const paths = mirrorPaths(options.root, handle);
  await onHost(paths.dir, () => makeMirrorDirs(options.root, paths));
  const release = await onHost(paths.lock, () => lockMirror(paths.lock));
  const leftovers: string[] = [];
  try {
    const owner: MirrorOwner = { sandbox: handle, boot: await bootId() };
    const index = await loadMirrorIndex(paths.index, owner);
    const full = index === null;
    const root = await onHost(paths.tree, () => DirHandle.open(paths.tree));
    try {
      const totals = { listingBytes: 0, archiveBytes: 0, requestBytes: 0, files: 0 };
      const listed = await fetchListing(sandbox, options.limits, signal);
      leftovers.push(...listed.files);
      totals.listingBytes += listed.bytes;
      const { survey, plan } = await onHost(paths.tree, () => prepare(root, listed.listing, index, options, signal));
      let outcome: DeltaOutcome = { written: new Map(), unexpected: 0, unstable: 0 };
      let clockNs = 0n;
      if (plan.fetch.size > 0) {
        const delta = await fetchDelta(sandbox, [...plan.fetch.values()], options.limits, signal);
        leftovers.push(...delta.files);
        clockNs = delta.clockNs;
        outcome = await writeDelta(root, paths, plan, delta.restat, delta.archive.chunks, signal);
        totals.archiveBytes += delta.archive.bytes() + delta.restatBytes;
        totals.requestBytes += delta.requestBytes;
      }
      const next = nextIndex(listed.listing, index, survey, plan, outcome.written, clockNs);
      await onHost(paths.tree, () => removeUntrusted(root, next.untrusted));
      await onHost(paths.index, () => saveMirrorIndex(paths.index, owner, next.index));
      totals.files += outcome.written.size;
      const transfer: TreeTransfer = { ...totals, full };
      return { path: paths.tree, statCache: paths.statCache, transfer, release };
    } finally {
      await root.close();
    }
  } catch (error) {
    await release();
    throw error;
  } finally {
    // Best effort: a leftover transfer file only costs space in .fleet, never correctness.
    if (leftovers.length > 0 && !signal.aborted) await runScript(sandbox, { operation: 'openTree', script: REMOVE_SCRIPT, args: leftovers, signal }).catch(() => undefined);
  }
}

// The mirror's directories, 0700 (the root too: it holds every workspace's files).
async function makeMirrorDirs(root: string, paths: MirrorPaths): Promise<void> {
  await mkdir(root, { recursive: true, mode: 0o700 });
  await mkdir(paths.dir, { recursive: true, mode: 0o700 });
  await mkdir(paths.tree, { recursive: true, mode: 0o700 });
}

// Steps 3 and 4a: the mirror matches the listing except for file contents; which files to fetch.
async function prepare(root: DirHandle, listing: Listing, index: Parameters<typeof planDelta>[1], options: MirrorOptions, signal: AbortSignal): Promise<{ survey: MirrorSurvey; plan: DeltaPlan }> {
  const survey = await surveyMirror(root, listing, signal);
  const cursor = new DirCursor(root);
  try {
    await applyListing({ cursor, listing, survey, maxNewFifos: options.limits.maxNewFifos, systemPath: options.systemPath, signal });
  } finally {
    await cursor.close();
  }
  return { survey, plan: planDelta(listing, index, survey, options.limits.maxFileBytes) };
}

// An empty staging directory, open.
async function freshStaging(paths: MirrorPaths): Promise<DirHandle> {
  await onHost(paths.staging, async () => {
    await removeTree(paths.staging);
    await mkdir(paths.staging, { mode: 0o700 });
  });
  return onHost(paths.staging, () => DirHandle.open(paths.staging));
}

// Step 4b: the archive's files into the mirror, through a fresh staging directory.
async function writeDelta(root: DirHandle, paths: MirrorPaths, plan: DeltaPlan, restat: Parameters<typeof applyDelta>[0]['restat'], chunks: AsyncIterable<Buffer>, signal: AbortSignal): Promise<DeltaOutcome> {
  const staging = await freshStaging(paths);
  const cursor = new DirCursor(root);
  try {
    let expected = 0;
    for (const entry of plan.fetch.values()) expected += entry.size + ARCHIVE_OVERHEAD_PER_FILE;
    const tooLarge = () => new UnsafeTarEntryError('(archive)', `more than the ${expected} bytes the files asked for can take`);
    return await onHost(paths.tree, () => applyDelta({ source: gunzipBounded(chunks, expected + 1024 * 1024, tooLarge), cursor, staging, wanted: plan.fetch, restat, signal }));
  } finally {
    await cursor.close();
    await staging.close();
  }
}

// Removes mirror copies the sandbox may not have (see plan-delta.ts), beneath their parents' handles.
async function removeUntrusted(root: DirHandle, keys: readonly string[]): Promise<void> {
  const cursor = new DirCursor(root);
  try {
    for (const key of keys) {
      const { parent, name } = splitRelative(Buffer.from(key, 'latin1'));
      await removeEntry(await cursor.at(parent), name);
    }
  } finally {
    await cursor.close();
  }
}

// Host-side filesystem work: its errors become typed storage errors (fleet errors pass through).
async function onHost<T>(path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw classifyStorageError(error, 'vercel mirror', path);
  }
}
