/**
 * Persist lag (G3): for every active workspace (published, runtime not stopped), the time since
 * the archive last caught up with it: now − max(start of the newest successful persist run,
 * publication). A run holds the live tree as it was when it began reading it, not when it
 * finished, so the lag counts from its start (`capturedAt`; `completedAt` for runs recorded
 * before that field). A checkpoint that found nothing new counts as caught up.
 */
import type { Address, AddressStore } from '../state/address-store.js';
import type { PersistIntentStore } from '../state/persist-intent.js';
import type { RuntimeStore } from '../state/runtime-store.js';

export interface LagSummary {
  readonly activeWorkspaces: number;
  readonly maxPersistLagMs: number;
  /** Lag of each active workspace (for histograms). */
  readonly lags: readonly number[];
}

/** The stores the fleet-wide lag reads. */
export interface PersistLagDeps {
  readonly addresses: Pick<AddressStore, 'known' | 'publishedAtOf'>;
  readonly intents: Pick<PersistIntentStore, 'caughtUpOf'>;
  readonly runtime: Pick<RuntimeStore, 'statesOf'>;
}

// Workspaces read per round of pipelines.
const BATCH = 500;

/** The persist lag at `now` of a workspace published at `publishedAt` with the given persist status fields. */
export function lagMs(now: number, publishedAt: number, status: { readonly completedAt: number; readonly capturedAt: number }): number {
  return Math.max(0, now - Math.max(publishedAt, status.capturedAt || status.completedAt));
}

/** Persist lag of one live incarnation: time since the archive last caught up with it. */
export async function persistLagMs({ intents }: { readonly intents: Pick<PersistIntentStore, 'status'> }, address: Pick<Address, 'workspaceId' | 'publishedAt'>, now = Date.now()): Promise<number> {
  return lagMs(now, address.publishedAt, await intents.status(address.workspaceId));
}

/** Persist lag of every active workspace (`fleet status`, `fleet top` and `/metrics` read it through `readFleetSnapshot`). */
export async function readPersistLag({ addresses, intents, runtime }: PersistLagDeps, now = Date.now()): Promise<LagSummary> {
  const workspaces = await addresses.known();
  const lags: number[] = [];
  for (let i = 0; i < workspaces.length; i += BATCH) {
    const batch = workspaces.slice(i, i + BATCH);
    const [published, caughtUp, states] = await Promise.all([addresses.publishedAtOf(batch), intents.caughtUpOf(batch), runtime.statesOf(batch)]);
    batch.forEach((_, j) => {
      const publishedAt = published[j];
      if (publishedAt === null || publishedAt === undefined || states[j] === 'stopped') return;
      lags.push(lagMs(now, publishedAt, caughtUp[j]!));
    });
  }
  return { activeWorkspaces: lags.length, maxPersistLagMs: lags.length ? Math.max(...lags) : 0, lags };
}
