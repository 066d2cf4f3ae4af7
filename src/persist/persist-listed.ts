/**
 * The persist protocol's build and commit in archive format 2 for a tree that is not on this host
 * (`SandboxProvider.listTree`: Vercel): list the tree, decide what the basis already holds
 * (`planListing`), fetch the rest straight into the object store, build the trees from the
 * listing (`buildFromListing`), then the same checks and commit as a walk of a host tree
 * (persist-to-store.ts): torn source, shrink guard, revision record, fenced attach.
 *
 * A reconcile (a turn end, or a checkpoint) takes a tree the sandbox really had at one instant:
 * a round whose listing shows nothing changed while it was walked (`TreeListing.oneInstant`) and
 * whose fetch took every file it asked for as listed; or two listings in a row that agree (the
 * tree of the instant between them). Otherwise it lists and builds again, up to
 * `SETTLE_LISTINGS` listings; then a checkpoint fails retryably (`TreeChanged`) and commits
 * nothing, and a turn end (whose agent was to stop writing) commits its last listing and reports
 * `pointInTime: false`. A listing of a tree that moved while `find` walked it can lack a file
 * renamed across directories, or hold a delete without the write before it (torn trees, caught
 * in the loss-window benchmark). A file fetched by an earlier round is not fetched again while
 * the sandbox lists the same version. A checkpoint whose exact tree would be refused as a
 * reconcile keeps what the tree lacks instead. A workspace's first persist compares with the
 * archived base it was made from, if any (persist/base-seed.ts): the base's files listed as they
 * were are not fetched.
 */
import { BasisLookup, buildFromListing, planListing, type FetchedFile, type ListedIndex, type ListingBuild, type ListingPlan } from '../archive/listing-builder.js';
import { WalkTally } from '../archive/walk-tally.js';
import { EmptySourceError } from '../errors/empty-source-error.js';
import { TreeChangedError } from '../errors/tree-changed-error.js';
import type { ListedTree, TreeListing } from '../providers/sandbox-provider.js';
import type { PersistResult } from '../queues/persist.js';
import { asStoreWriter, type StoreWriter } from '../state/store-writers.js';
import { sameListed, type ListedEntry, type Listing } from '../tree/listing.js';
import { checkSourceIntact, reportTree, treeReport, type PersistContext, type PersistDeps, type PersistRequest } from './persist-workspace.js';
import { commitBuiltRoot, declaredBasis, declaredSeed, exactRefusal, unchangedStoreResult, type StoreRunBase } from './store-basis.js';
import { fetchIntoStore } from './fetch-into-store.js';

/** Listings of a checkpoint at most (the first and those that check it). */
const SETTLE_LISTINGS = 3;
/** Files stored between two progress reports of a fetch. */
const PROGRESS_EVERY = 1_000;

export interface ListedRun extends StoreRunBase {
  readonly tree: ListedTree;
}

/** One listing built into trees. */
interface Round {
  readonly listed: TreeListing;
  readonly plan: ListingPlan;
  readonly build: ListingBuild;
  readonly scan: ReturnType<typeof scanOf>;
  /** Nothing asked for changed before the sandbox's second look, nothing unexpected came. */
  readonly steady: boolean;
  readonly keepMissing: boolean;
}

/** Builds and commits one revision from listings, as a registered writer of the store. */
export async function persistListed(deps: PersistDeps, request: PersistRequest, ctx: PersistContext, run: ListedRun): Promise<PersistResult> {
  return asStoreWriter(deps.storeWriters, request.workspaceId, (writer) => listedAs(writer, deps, request, ctx, run));
}

// What the checks and the report of a walk read, for a listing (nothing vanishes from a listing).
function scanOf(listing: Listing, plan: ListingPlan, maxFileBytes: number) {
  const tally = new WalkTally();
  tally.walked = listing.entries.size;
  tally.skipped.devices = listing.skipped.special;
  for (const entry of plan.refused.values()) tally.refuse('file-bytes', entry.rel, `file is ${entry.size} bytes, over the ${maxFileBytes}-byte limit`);
  return { rootChanged: false, vanished: 0, walked: tally.walked, refused: tally.refused, refusedCount: tally.refusedCount, skipped: tally.skipped, strippedModes: 0 };
}

// True when two listings name the same entries with the same type, size, mode, times, inode and target.
function sameListing(a: Listing, b: Listing): boolean {
  if (a.truncated || b.truncated || a.entries.size !== b.entries.size) return false;
  for (const [key, x] of a.entries) {
    const y = b.entries.get(key);
    if (!y || !sameListed(x, y)) return false;
    if ((x.target === undefined) !== (y.target === undefined) || (x.target && !x.target.equals(y.target!))) return false;
  }
  return true;
}

async function listedAs(writer: StoreWriter, deps: PersistDeps, request: PersistRequest, ctx: PersistContext, run: ListedRun): Promise<PersistResult> {
  const { workspaceId, generation } = request;
  const { tree, currentRevision, revision } = run;
  const store = deps.archive.objects;
  const basis = await declaredBasis(writer, deps, request, currentRevision, ctx.signal);
  // A first persist compares with the base the workspace was made from (never keeping what the tree lacks of it).
  const seed = basis ? null : await declaredSeed(writer, deps, workspaceId);
  const unchanged = () => unchangedStoreResult(request, run, basis);

  await ctx.progress({ step: 'link', percent: 10 });
  const index: ListedIndex | null = basis?.native && currentRevision ? await tree.loadIndex(currentRevision) : null;
  const compareWith = basis?.root ?? seed?.root ?? null;
  const lookup = new BasisLookup(store, compareWith);
  const stored = { newObjects: 0, storedBytes: 0 };
  // Files an earlier round fetched, by key: a later listing of the same version takes the same object.
  const fetchedSoFar = new Map<string, { entry: ListedEntry; file: FetchedFile }>();
  const maxFileBytes = deps.treeLimits.maxFileBytes;

  const scanStartedAt = BigInt(Date.now()) * 1_000_000n;
  // One listing built into trees; `again`: the listing of the round before (what it fetched is taken as it is).
  const round = async (keepMissing: boolean, listed?: TreeListing, again = false): Promise<Round> => {
    listed ??= await tree.list(ctx.signal);
    const plan = await planListing({ basis: lookup, listing: listed.listing, index, maxFileBytes, hasObject: (id) => store.hasObjectSync(id), signal: ctx.signal });
    const fetched = new Map<string, FetchedFile>();
    const wanted: ListedEntry[] = [];
    for (const entry of plan.fetch.values()) {
      const before = fetchedSoFar.get(entry.key);
      if (before && (again || before.file.indexable) && sameListed(before.entry, entry)) fetched.set(entry.key, before.file);
      else wanted.push(entry);
    }
    let steady = true;
    if (wanted.length > 0) {
      await ctx.progress({ step: 'link', done: 0, total: wanted.length, percent: 20 });
      // Progress as the files arrive (a first full persist of a large tree is one long fetch).
      let done = 0;
      const onStored = () => {
        if (++done % PROGRESS_EVERY === 0) void ctx.progress({ step: 'link', done, total: wanted.length, percent: 20 + Math.floor((30 * done) / wanted.length) });
      };
      const got = await fetchIntoStore(tree, wanted, store, { signal: ctx.signal, onStored });
      stored.newObjects += got.newObjects;
      stored.storedBytes += got.storedBytes;
      steady = got.unstable === 0 && got.unexpected === 0;
      for (const [key, file] of got.stored) {
        fetched.set(key, file);
        fetchedSoFar.set(key, { entry: plan.fetch.get(key)!, file });
      }
    }
    const build = await buildFromListing({ store, basis: lookup, basisRoot: compareWith, listing: listed.listing, plan, fetched, seedIndexable: listed.settled, index, keepMissing: keepMissing && seed === null, signal: ctx.signal });
    return { listed, plan, build, scan: scanOf(listed.listing, plan, maxFileBytes), steady, keepMissing };
  };

  const exact = request.exact === true && !request.delete;
  let built = await round(!(request.delete || exact));
  const rounds = [built];
  const listing = built.listed.listing;
  if (listing.entries.size === 0 && !listing.truncated) {
    if (basis && basis.entries > 0) {
      throw new EmptySourceError(`workspace ${workspaceId}: the sandbox's tree is empty but revision ${currentRevision} has ${basis.files} files; refusing to persist (wiped?)`, {
        context: { workspaceId, revision: currentRevision },
      });
    }
    return unchanged();
  }
  // A checkpoint takes the tree exactly unless a reconcile would be refused; then it keeps what the tree lacks.
  let refused = exact ? await exactRefusal(deps, basis, { root: built.build.root, scan: built.scan }) : null;
  let pointInTime: boolean | undefined;
  // A reconcile takes the tree at one instant where it can show one (see the header).
  if ((exact && !refused) || request.delete) {
    let listings = 1;
    let proven = built.steady && built.listed.oneInstant;
    while (!proven && listings < SETTLE_LISTINGS) {
      const again = await tree.list(ctx.signal);
      listings += 1;
      if (built.steady && sameListing(built.listed.listing, again.listing)) {
        proven = true;
        break;
      }
      built = await round(false, again);
      rounds.push(built);
      if (exact) {
        refused = await exactRefusal(deps, basis, { root: built.build.root, scan: built.scan });
        if (refused) break;
      }
      proven = built.steady && again.oneInstant;
    }
    if (exact) {
      if (!proven && !refused) {
        throw new TreeChangedError(`workspace ${workspaceId}: the tree changed while each of ${listings} listings was taken or read; not committing a checkpoint that may mix two moments`, {
          context: { workspaceId, listings },
        });
      }
      pointInTime = proven;
    } else if (!proven) {
      // A turn end promises a tree that stopped changing; this one did not, so it is taken as last listed.
      pointInTime = false;
      ctx.logger.warn({ workspaceId, listings }, 'the tree kept changing during a reconcile: committed as last listed, which may mix two moments');
    }
  }
  if (refused) {
    ctx.logger.info({ workspaceId, reason: refused }, 'checkpoint keeps what the live tree lacks (a reconcile would be refused)');
    built = await round(true, built.listed, true);
    rounds.push(built);
    pointInTime = undefined;
  }
  const { build, scan, plan } = built;
  const reconcile = !built.keepMissing;
  checkSourceIntact({ ...request, delete: reconcile }, scan);
  reportTree(ctx.logger, workspaceId, scan);
  const seeded = [...plan.kept.values()].filter((k) => k.seeded).length;
  const transfer = tree.transfer();
  const transferReport = {
    transferredBytes: transfer.listingBytes + transfer.archiveBytes + transfer.requestBytes,
    transferredFiles: transfer.files,
    ...(seeded > 0 ? { seededFiles: seeded } : {}),
    ...(rounds.length > 1 ? { walks: rounds.length } : {}),
    ...(pointInTime === undefined ? {} : { pointInTime }),
  };
  // The index is a hint for the next persist: losing it costs transfers, never content.
  const saveIndex = (of: string) => tree.saveIndex(of, build.index).catch((error: unknown) => ctx.logger.warn({ err: error, workspaceId }, 'could not save the listed-tree index'));

  await ctx.progress({ step: 'scan', percent: 50 });
  if (basis?.native && build.root === basis.root) {
    if (build.indexChanged) await saveIndex(currentRevision!);
    return { ...unchanged(), bytes: build.bytes, files: build.files, ...treeReport(scan), ...transferReport };
  }
  const { removedEntries } = await commitBuiltRoot(deps, request, ctx, run, basis, { root: build.root, files: build.files, bytes: build.bytes, entries: build.entries, reconcile, scanStartedAt });
  await saveIndex(revision);
  await ctx.progress({ step: 'done', percent: 100 });
  return {
    workspaceId,
    revision,
    generation,
    files: build.files,
    bytes: build.bytes,
    changedFiles: build.changedFiles,
    deletedFiles: removedEntries,
    unchanged: false,
    durationMs: Date.now() - run.started,
    coveredSeq: request.coveredSeq,
    storedBytes: stored.storedBytes,
    newObjects: stored.newObjects,
    newTrees: rounds.reduce((total, r) => total + r.build.newTrees, 0),
    reusedDirectories: build.reusedDirs,
    ...transferReport,
    ...treeReport(scan),
  };
}
