/**
 * The persist protocol's build and commit in archive format 2 (persist-workspace.ts runs the
 * fence, the gate and the head first): walk the live tree into objects and trees
 * (`StoreBuilder`), refuse a torn source, apply the shrink guard, then commit the revision record
 * (`commitRecord`). A format 1 current revision is converted once into trees (the basis of the
 * quick check and of what upload-only keeps), so a workspace moves to format 2 with its next
 * persist and its history reads as one. A workspace's first persist compares with the archived
 * base it was made from, if any (persist/base-seed.ts).
 */
import { FlushAhead } from '../archive/flush-ahead.js';
import { syncFilesystem } from '../archive/fsync.js';
import { NO_FACTS, statCacheMarker, type StatCache, type StatCacheEntry } from '../archive/stat-cache.js';
import { StoreBuilder, type StoreBasis } from '../archive/store-builder.js';
import { clockLine, stampChangeLine } from '../archive/change-stamp.js';
import { FULL_WALK_EVERY_MS, startChangeScan, type ChangeScan, type ChangedDirs } from '../archive/changed-dirs.js';
import { EmptySourceError } from '../errors/empty-source-error.js';
import { TreeChangedError } from '../errors/tree-changed-error.js';
import { asStoreWriter, type StoreWriter } from '../state/store-writers.js';
import type { PersistResult } from '../queues/persist.js';
import type { TreeSource } from '../providers/sandbox-provider.js';
import { DirHandle, stillAt } from '../tree/dir-handle.js';
import { checkSourceIntact, isEmptyTree, reportTree, treeReport, type PersistContext, type PersistDeps, type PersistRequest } from './persist-workspace.js';
import { commitBuiltRoot, declaredBasis, declaredSeed, exactRefusal, unchangedStoreResult, type StoreRunBase } from './store-basis.js';

/** Walks of a checkpoint at most (the first and those that check it); see persistAs. */
const SETTLE_WALKS = 3;
/** Bytes a walk stores between two background flushes of the archive (archive/flush-ahead.ts). */
const FLUSH_AHEAD_BYTES = 64 * 1024 * 1024;

export interface StoreRun extends StoreRunBase {
  readonly tree: TreeSource;
}

/**
 * Builds and commits one revision as a registered writer of the store (state/store-writers.ts):
 * registered before its first write, its basis root declared, gone once the record is written.
 */
export async function persistToStore(deps: PersistDeps, request: PersistRequest, ctx: PersistContext, run: StoreRun): Promise<PersistResult> {
  return asStoreWriter(deps.storeWriters, request.workspaceId, (writer) => persistAs(writer, deps, request, ctx, run));
}

async function persistAs(writer: StoreWriter, deps: PersistDeps, request: PersistRequest, ctx: PersistContext, run: StoreRun): Promise<PersistResult> {
  const { workspaceId, generation } = request;
  const { tree, currentRevision, revision } = run;
  const basis = await declaredBasis(writer, deps, request, currentRevision, ctx.signal);
  // A first persist compares with the base the workspace was made from (never keeping what the tree lacks of it).
  const seed = basis ? null : await declaredSeed(writer, deps, workspaceId);
  const unchanged = () => unchangedStoreResult(request, run, basis);
  if (await isEmptyTree(tree.path, workspaceId)) {
    if (basis && basis.entries > 0) {
      throw new EmptySourceError(`workspace ${workspaceId}: live tree is empty but revision ${currentRevision} has ${basis.files} files; refusing to persist (unmounted or wiped?)`, {
        context: { workspaceId, revision: currentRevision },
      });
    }
    return unchanged();
  }

  await ctx.progress({ step: 'link', percent: 10 });
  const src = await DirHandle.open(tree.path);
  const loaded = basis?.native && tree.statCache && currentRevision ? await deps.statCaches.load(tree.statCache, currentRevision, src.stats) : null;
  const cache = loaded?.entries ?? null;
  const scanStartedAt = BigInt(Date.now()) * 1_000_000n;
  // When the last walk of every directory of this tree was (a walk that takes directories by id carries it on).
  let fullWalkAt = loaded?.facts.fullWalkAt ?? 0;
  // The scan for the directories that changed since the walk that found `from`, when `from` is
  // exactly what a recent walk of this very tree found; null (walk everything) otherwise.
  const changedSince = (from: StoreBasis | null, exactFrom: boolean): ChangeScan | null => {
    if (!deps.changeScan || !from || !exactFrom || Date.now() - fullWalkAt > FULL_WALK_EVERY_MS) return null;
    // A clock set back since that walk could date a change before it: walk everything.
    if (BigInt(Date.now()) * 1_000_000n < from.changedAfterNs) return null;
    // `find -newerct` lists what changed after its time: at or after the line.
    return startChangeScan(src, { sinceNs: from.changedAfterNs - 1n, maxRecords: deps.treeLimits.maxEntries, systemPath: deps.systemPath, signal: ctx.signal });
  };
  // The line of the walk that found the current revision, as its cache recorded it (else the record's clock gives it).
  const current = basis && loaded?.facts.changedAfterNs != null ? { ...basis, changedAfterNs: loaded.facts.changedAfterNs } : basis;
  const marker = tree.statCache ? statCacheMarker(tree.statCache) : null;
  // One walk of the live tree into the store; `keepMissing`: keep what the tree lacks (upload-only).
  // `dirsFrom`: the directories the walk that found `from` recorded (ScanFacts.dirs).
  const flushAhead = new FlushAhead(() => syncFilesystem(deps.archive.root, deps.systemPath, ctx.signal), FLUSH_AHEAD_BYTES);
  // `exactLineFrom`: `from`'s line is the filesystem's own, and its walk met no other device.
  const walk = async (keepMissing: boolean, from: StoreBasis | null = current ?? seed, hint: StatCache | null = cache, exactFrom = loaded?.facts.exact === true, dirsFrom = loaded?.facts.dirs ?? NO_FACTS.dirs, report = true, exactLineFrom = loaded?.facts.exactLine === true) => {
    const startedAt = BigInt(Date.now()) * 1_000_000n;
    // Drawn before anything of the tree is read.
    const stamp = stampChangeLine(marker, src.stats.dev);
    const scanning = changedSince(from, exactFrom);
    const build = async (changed: ChangedDirs | null) => {
      let flushed = 0;
      const builder: StoreBuilder = new StoreBuilder({
        store: deps.archive.objects,
        basis: from,
        cache: hint,
        keepMissing: keepMissing && (seed === null || from !== seed),
        limits: deps.treeLimits,
        signal: ctx.signal,
        changed,
        recordedDirs: dirsFrom,
        onProgress: (done) => {
          flushAhead.add(builder.storedBytes - flushed);
          flushed = builder.storedBytes;
          if (!report) return;
          const total = Math.max(done, basis?.entries ?? done);
          void ctx.progress({ step: 'link', done, total, percent: 10 + Math.floor(40 * Math.min(1, done / Math.max(1, total))) });
        },
      });
      return { builder, root: await builder.build(src) };
    };
    // The walk follows the scan as it goes (store-builder.ts `#whileScanning`).
    let { builder, root } = await build(scanning?.listing ?? null);
    if (scanning) {
      const answer = await scanning.finished;
      // It followed a scan that then failed (or was made again), or a directory moved under it: walk again with the scan's answer.
      if (answer !== scanning.listing || builder.aheadMissed) {
        const reason = builder.aheadMissed ? 'a directory walked while the scan went on was moved or replaced' : answer === null ? 'the change scan failed' : "the change scan was made again by a find of its own";
        ctx.logger.info({ workspaceId, reason }, 'persist walks the tree again without following the scan');
        ({ builder, root } = await build(answer));
      }
    }
    const rootChanged = !(await stillAt(tree.path, src)) || (await src.stat()).nlink === 0n;
    const { tally } = builder;
    const scan = { rootChanged, vanished: tally.vanished, walked: tally.walked, refused: tally.refused, refusedCount: tally.refusedCount, skipped: tally.skipped, strippedModes: tally.strippedModes };
    if (builder.reusedDirs === 0) fullWalkAt = Number(startedAt / 1_000_000n);
    // The tree as this walk found it: a directory taken by id keeps its files' cache entries.
    const entries = new Map<string, StatCacheEntry>(builder.reusedDirs > 0 && hint ? hint : []);
    for (const entry of builder.cacheEntries) entries.set(entry.path, entry);
    // Likewise the directories: one taken by id is the one recorded before (it did not change).
    const dirs = new Map<string, string>(builder.reusedDirs > 0 ? dirsFrom : []);
    for (const [dir, identity] of builder.dirIdentities) dirs.set(dir, identity);
    // Exact: what it found, nothing kept that the tree lacks, nothing refused.
    const exact = !keepMissing && tally.refusedCount === 0 && !rootChanged;
    // The filesystem's line holds when no entry of another device was met: by this walk, and by
    // the walks whose findings it took without a stat (directories by id, vouched entries).
    const lookedAtAll = builder.reusedDirs === 0 && builder.vouchedEntries === 0;
    const exactLine = stamp !== null && !builder.foreignDevice && (lookedAtAll || exactLineFrom);
    const drawn = exactLine ? stamp : clockLine(startedAt);
    // No later than a file whose previous version it kept (a write may still be under way there).
    const changedAfterNs = builder.unsettledNs !== null && builder.unsettledNs < drawn ? builder.unsettledNs : drawn;
    return { builder, root, scan, keepMissing, startedAt, entries, dirs, exact, changedAfterNs, exactLine };
  };
  type Walk = Awaited<ReturnType<typeof walk>>;
  const factsOf = (w: Walk) => ({ exact: w.exact, fullWalkAt, dirs: w.dirs, changedAfterNs: w.changedAfterNs, exactLine: w.exactLine });
  const exact = request.exact === true && !request.delete;
  const walks: Walk[] = [];
  let built: Walk;
  let pointInTime: boolean | undefined;
  try {
    built = await walk(!(request.delete || exact));
    walks.push(built);
    // A checkpoint takes the tree exactly unless a reconcile would be refused; then it keeps what the tree lacks.
    let refused = exact ? await exactRefusal(deps, basis, built) : null;
    if (exact && !refused) {
      // A checkpoint runs while the agent writes: walk again (against the walk before, so only
      // what changed is read) until two walks in a row agree. Then every entry had the state
      // read at the instant between them: the revision is a state the tree really had, not a
      // mix of two moments. A tree that keeps changing commits nothing (TreeChanged, retried): its
      // last walk may hold a file's rename into a directory walked before without the file, or a
      // delete without the write before it (seen on Vercel's listings, possible here too).
      pointInTime = false;
      while (walks.length < SETTLE_WALKS) {
        const again = await walk(false, { root: built.root, changedAfterNs: built.changedAfterNs }, built.entries, built.exact, built.dirs, false, built.exactLine);
        walks.push(again);
        // A walk that kept a file's earlier version (it changed while read) or lost an entry saw the
        // tree move: no proof. Unless the walk before kept that file back too, under the same
        // ctime: no write began between the walks, the one under way (a write(2) stalled mid-copy)
        // is the same, and the revision keeps the file's previous version as any persist does
        // (else one stalled writer would hold back every checkpoint until it ends).
        const sameUnsettled = [...again.builder.unsettled].every(([file, ctimeNs]) => built.builder.unsettled.get(file) === ctimeNs);
        const still = sameUnsettled && again.scan.vanished === 0 && !again.scan.rootChanged;
        if (still && again.root === built.root) {
          pointInTime = true;
          break;
        }
        built = again;
        refused = await exactRefusal(deps, basis, built);
        if (refused) break;
      }
      if (!pointInTime && !refused) {
        throw new TreeChangedError(`workspace ${workspaceId}: the tree changed during each of ${walks.length} walks; not committing a checkpoint that may mix two moments`, {
          context: { workspaceId, walks: walks.length },
        });
      }
    }
    if (refused) {
      ctx.logger.info({ workspaceId, reason: refused }, 'checkpoint keeps what the live tree lacks (a reconcile would be refused)');
      built = await walk(true, current ?? seed, cache, loaded?.facts.exact === true, loaded?.facts.dirs, false);
      walks.push(built);
      pointInTime = undefined;
    }
  } finally {
    await flushAhead.settle();
    await src.close();
  }
  const { builder, root, scan } = built;
  // What this run did across its walks: the first compares with the basis, each later one with the walk before.
  const sum = (count: (b: StoreBuilder) => number) => walks.reduce((total, w) => total + count(w.builder), 0);
  const walkReport = { ...(walks.length > 1 ? { walks: walks.length } : {}), ...(pointInTime === undefined ? {} : { pointInTime }) };
  const reconcile = !built.keepMissing;
  checkSourceIntact({ ...request, delete: reconcile }, scan);
  reportTree(ctx.logger, workspaceId, scan);

  await ctx.progress({ step: 'scan', percent: 50 });
  if (basis?.native && root === basis.root) {
    // Nothing changed, but a full walk moved `fullWalkAt`: the cache of the same revision says so.
    if (tree.statCache && currentRevision && loaded && fullWalkAt !== loaded.facts.fullWalkAt) deps.statCaches.save(tree.statCache, currentRevision, src.stats, built.entries, factsOf(built));
    return { ...unchanged(), bytes: builder.bytes, files: builder.files, ...treeReport(scan), ...walkReport };
  }
  const rootBuilt = { root, files: builder.files, bytes: builder.bytes, entries: builder.entries, reconcile, scanStartedAt };
  // Last look before the revision becomes visible: a tree wiped since the walk is not committed.
  const { removedEntries } = await commitBuiltRoot(deps, request, ctx, run, basis, rootBuilt, async () => {
    if (!(await stillAt(tree.path, src))) checkSourceIntact({ ...request, delete: reconcile }, { ...scan, rootChanged: true });
  });
  // The stat cache is a hint for the next persist (kept in memory, its file written after this returns).
  if (tree.statCache) deps.statCaches.save(tree.statCache, revision, src.stats, built.entries, factsOf(built));
  await ctx.progress({ step: 'done', percent: 100 });
  return {
    workspaceId,
    revision,
    generation,
    files: builder.files,
    bytes: builder.bytes,
    changedFiles: sum((b) => b.changedFiles),
    deletedFiles: removedEntries,
    unchanged: false,
    durationMs: Date.now() - run.started,
    coveredSeq: request.coveredSeq,
    storedBytes: sum((b) => b.storedBytes),
    newObjects: sum((b) => b.newObjects),
    newTrees: sum((b) => b.newTrees),
    ...(sum((b) => b.offThreadObjects) > 0 ? { offThreadObjects: sum((b) => b.offThreadObjects) } : {}),
    reusedDirectories: builder.reusedDirs,
    unstattedEntries: builder.vouchedEntries,
    unlistedDirectories: builder.listedDirs,
    ...(sum((b) => b.writeWaitMs) > 0 ? { writeWaitMs: sum((b) => b.writeWaitMs) } : {}),
    ...walkReport,
    ...treeReport(scan),
  };
}
