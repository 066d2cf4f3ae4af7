/**
 * Objects and trees of the shared store that no revision reaches (GC by reachability; the rule
 * is in docs/archive-format.md). Mark: everything reachable from every format 2 revision record
 * (those of archives a reset moved aside too) and from the roots writers in flight declared
 * (mark-reachable.ts). Sweep:
 * unreachable entries older than the cutoff, at most `limit` a run (sweep-store.ts); a pack
 * mostly unreachable is repacked (repack-pack.ts).
 *
 * The cutoff is the earlier of `now − grace` and the start of the oldest writer in flight, less
 * a clock margin. A writer's new objects and trees are unreachable until its record is written,
 * but every one of them is written, or refreshed when it already existed (ObjectStore `#reuse`),
 * after the writer registered: so no GC deletes them while it runs, and the grace (more than
 * twice the longest writer deadline) keeps them if the registry was lost.
 */
import type { GcContext, GcItem, GcKindRunner } from './gc-kind.js';
import { idsValid } from './checked-ids.js';
import { markReachable, type Reachable } from './mark-reachable.js';
import { repackPack } from './repack-pack.js';
import { findUnreachable, recoverQuarantined, removeUnreachable, type StoreCandidate } from './sweep-store.js';

/**
 * How far a writer's clock may trail the clock that stamps the files it writes (its own kernel,
 * or an NFS server), in ms: NTP keeps hosts within a second; a minute leaves room for a host
 * whose clock was stepped.
 */
export const CLOCK_MARGIN_MS = 60_000;

export interface ObjectsKindOptions {
  /** @default config.retention.objectGraceMs (tests pass 0 to show that the writers' registry alone keeps a persist's work) */
  readonly graceMs?: number;
}

interface Planned {
  readonly reachable: Reachable;
  readonly candidates: WeakMap<GcItem, StoreCandidate>;
  /** Registry entries of writers long dead, or not entries at all: forgotten by a real run. */
  readonly stale: readonly string[];
}

// A writer older than twice the longest deadline of any writer is dead (its process was killed at the deadline).
const staleBefore = (ctx: GcContext) => ctx.now - 2 * Math.max(ctx.deps.config.deadlines.persistMs, ctx.deps.config.deadlines.backfillMs);

export function objectsKind(options: ObjectsKindOptions = {}): GcKindRunner {
  const plans = new WeakMap<readonly GcItem[], Planned>();
  return {
    async plan(ctx) {
      const { archive, storeWriters } = ctx.deps;
      const graceMs = options.graceMs ?? ctx.deps.config.retention.objectGraceMs;
      const { writers, invalid } = await storeWriters.list();
      for (const entry of invalid) ctx.skip({ field: 'storeWriter', value: entry.value.slice(0, 200), reason: 'not a store writer entry (ignored, then forgotten)' });
      const live = writers.filter((w) => w.startedAt >= staleBefore(ctx));
      const cutoffMs = Math.min(ctx.now - graceMs, ...live.map((w) => w.startedAt - CLOCK_MARGIN_MS));
      const markStarted = Date.now();
      // The roots are read again once the records are marked (mark-reachable.ts): a writer that registered since counts too.
      const declaredRoots = async () => {
        const now = await storeWriters.list();
        return [...live, ...now.writers.filter((w) => w.startedAt >= staleBefore(ctx))].flatMap((w) => w.roots);
      };
      const reachable = await markReachable(archive, { declaredRoots, signal: ctx.signal });
      const markMs = Date.now() - markStarted;
      const plan = await findUnreachable(archive.objects, reachable, { cutoffMs, limit: ctx.limit, now: ctx.now, signal: ctx.signal, skip: ctx.skip });
      ctx.note({
        revisions: reachable.revisions,
        reachableTrees: reachable.trees.size,
        reachableObjects: reachable.objects.size,
        reachableBytes: reachable.bytes,
        markMs,
        writersInFlight: live.length,
        cutoffAgeMs: ctx.now - cutoffMs,
        collectableObjects: plan.collectable.objects,
        collectableTrees: plan.collectable.trees,
        collectablePacks: plan.collectable.packs,
        collectableRepacks: plan.collectable.repacks,
        collectableBytes: plan.collectable.bytes,
        youngObjects: plan.young.objects,
        youngTrees: plan.young.trees,
        youngPacks: plan.young.packs,
        youngRepacks: plan.young.repacks,
        youngBytes: plan.young.bytes,
      });
      const candidates = new WeakMap<GcItem, StoreCandidate>();
      const items = plan.candidates.map((c) => {
        const age = `${Math.round(c.ageMs / 1000)} s old`;
        const description = c.live ? `pack to repack: ${c.live.length} reachable objects kept, the rest freed (${age})` : `unreachable ${c.kind} (${age})`;
        const item: GcItem = { id: c.id, description, bytes: c.bytes };
        candidates.set(item, c);
        return item;
      });
      plans.set(items, { reachable, candidates, stale: [...writers.filter((w) => w.startedAt < staleBefore(ctx)), ...invalid].map((w) => w.token) });
      return items;
    },
    async apply(ctx, planned) {
      const state = plans.get(planned);
      if (!state) return [];
      const { archive, storeWriters } = ctx.deps;
      const recovered = await recoverQuarantined(archive.objects, state.reachable);
      const removed: GcItem[] = [];
      let reused = 0;
      let damaged = 0;
      for (const item of planned) {
        ctx.signal.throwIfAborted();
        const candidate = state.candidates.get(item);
        if (!candidate || !idsValid(ctx, { objectId: candidate.id })) continue;
        const outcome = candidate.live ? await repackPack(archive.objects, { ...candidate, live: candidate.live }) : await removeUnreachable(archive.objects, candidate);
        if (outcome === 'removed') removed.push(item);
        if (outcome === 'reused') reused += 1;
        if (outcome === 'damaged') damaged += 1;
      }
      await storeWriters.forget(state.stale);
      ctx.note({ removedObjects: removed.filter((i) => state.candidates.get(i)!.kind === 'object').length, removedTrees: removed.filter((i) => state.candidates.get(i)!.kind === 'tree').length, removedPacks: removed.filter((i) => state.candidates.get(i)!.kind === 'pack' && !state.candidates.get(i)!.live).length, repackedPacks: removed.filter((i) => state.candidates.get(i)!.live).length, keptReused: reused, keptDamaged: damaged, recovered, forgottenWriters: state.stale.length });
      return removed;
    },
  };
}

export const objectsKindRunner = objectsKind();
