/**
 * One GC run of one kind, under its own lock (`gc:{kind}`), bounded by the payload's limit.
 * A dry run returns what a real run would remove and the bytes it would reclaim.
 */
import type { InvalidId } from '../providers/id-rules.js';
import type { GcKind, GcPayload } from '../queues/gc.js';
import type { GcDeps, GcItem, GcKindRunner } from './gc-kind.js';
import { idleKind } from './idle-kind.js';
import { basesKind } from './bases-kind.js';
import { litterKind } from './litter-kind.js';
import { orphansKind } from './orphans-kind.js';
import { retentionKind } from './retention-kind.js';
import { unattachedKind } from './unattached-kind.js';
import { objectsKindRunner } from './objects-kind.js';
import { verifyKind } from './verify-kind.js';
import { anySignal } from '../lib/any-signal.js';

export interface GcResult {
  readonly kind: GcKind;
  readonly dryRun: boolean;
  /** Items found (dry run) or removed (real run). */
  readonly count: number;
  readonly bytes: number;
  /** The first 200 items. */
  readonly items: readonly GcItem[];
  /** Ids that broke their rule and were left alone (each logged with its value). */
  readonly skipped: number;
  /** The first 200 of them. */
  readonly invalidIds: readonly InvalidId[];
  /** Facts the kind reported (e.g. the objects kind's mark and what it kept young). */
  readonly report: Readonly<Record<string, number | string>>;
  readonly durationMs: number;
}

export const GC_RUNNERS: Record<GcKind, GcKindRunner> = {
  unattached: unattachedKind,
  retention: retentionKind,
  litter: litterKind,
  bases: basesKind,
  orphans: orphansKind,
  idle: idleKind,
  objects: objectsKindRunner,
  verify: verifyKind,
};

export async function runGc(deps: GcDeps, payload: GcPayload, signal: AbortSignal, runners = GC_RUNNERS): Promise<GcResult> {
  const started = Date.now();
  return deps.singleFlight.using(`gc:${payload.kind}`, async (lock) => {
    // One entry per invalid id, even when both the plan and the apply come across it.
    const invalid = new Map<string, InvalidId>();
    const skip = (id: InvalidId) => {
      const key = `${id.field}\0${id.value}`;
      if (invalid.has(key)) return;
      invalid.set(key, id);
      deps.logger.warn({ kind: payload.kind, dryRun: payload.dryRun, field: id.field, value: id.value, reason: id.reason }, 'gc skipped an invalid id');
    };
    const report: Record<string, number | string> = {};
    const note = (facts: Readonly<Record<string, number | string>>) => void Object.assign(report, facts);
    const ctx = { deps, limit: payload.limit, now: Date.now(), signal: anySignal([signal, lock.signal]), skip, note };
    const runner = runners[payload.kind];
    const planned = await runner.plan(ctx);
    const done = payload.dryRun || runner.readOnly ? planned : await runner.apply(ctx, planned);
    if (!payload.dryRun && !runner.readOnly && done.length > 0) deps.logger.info({ kind: payload.kind, removed: done.length, bytes: sum(done), ...report }, 'gc removed items');
    const invalidIds = [...invalid.values()];
    return { kind: payload.kind, dryRun: payload.dryRun, count: done.length, bytes: sum(done), items: done.slice(0, 200), skipped: invalidIds.length, invalidIds: invalidIds.slice(0, 200), report, durationMs: Date.now() - started };
  });
}

const sum = (items: readonly GcItem[]) => items.reduce((total, item) => total + item.bytes, 0);
