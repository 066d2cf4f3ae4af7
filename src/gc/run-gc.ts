/**
 * One GC run of one kind, under its own lock (`gc:{kind}`), bounded by the payload's limit.
 * A dry run returns what a real run would remove and the bytes it would reclaim.
 */
import type { GcKind, GcPayload } from '../queues/gc.js';
import type { FleetServices } from '../runtime/services.js';
import type { GcItem, GcKindRunner } from './gc-kind.js';
import { idleKind } from './idle-kind.js';
import { basesKind } from './bases-kind.js';
import { litterKind } from './litter-kind.js';
import { orphansKind } from './orphans-kind.js';
import { retentionKind } from './retention-kind.js';
import { unattachedKind } from './unattached-kind.js';

export interface GcResult {
  readonly kind: GcKind;
  readonly dryRun: boolean;
  /** Items found (dry run) or removed (real run). */
  readonly count: number;
  readonly bytes: number;
  /** The first 200 items. */
  readonly items: readonly GcItem[];
  readonly durationMs: number;
}

export const GC_RUNNERS: Record<GcKind, GcKindRunner> = {
  unattached: unattachedKind,
  retention: retentionKind,
  litter: litterKind,
  bases: basesKind,
  orphans: orphansKind,
  idle: idleKind,
};

export async function runGc(services: FleetServices, payload: GcPayload, signal: AbortSignal, runners = GC_RUNNERS): Promise<GcResult> {
  const started = Date.now();
  return services.singleFlight.using(`gc:${payload.kind}`, async (lock) => {
    const ctx = { services, limit: payload.limit, now: Date.now(), signal: AbortSignal.any([signal, lock.signal]) };
    const runner = runners[payload.kind];
    const planned = await runner.plan(ctx);
    const done = payload.dryRun ? planned : await runner.apply(ctx, planned);
    if (!payload.dryRun && done.length > 0) services.logger.info({ kind: payload.kind, removed: done.length, bytes: sum(done) }, 'gc removed items');
    return { kind: payload.kind, dryRun: payload.dryRun, count: done.length, bytes: sum(done), items: done.slice(0, 200), durationMs: Date.now() - started };
  });
}

const sum = (items: readonly GcItem[]) => items.reduce((total, item) => total + item.bytes, 0);
