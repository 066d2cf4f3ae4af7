/**
 * Restore priority (DESIGN.md "Provisioning: restore priority") as a pure decision over what is
 * known about a workspace, so every branch is unit-tested without I/O.
 *
 *  1. a live incarnation of the current generation, confirmed by the provider → reused
 *  2. a stopped (persistent) incarnation the provider can resume            → resumed
 *  3. an attached archive revision                                          → restored
 *  4. a provider-native workspace snapshot                                  → restored-native
 *  5. never had state: the lane's active base → created-from-base, else     → created-empty
 *  6. known (ever provisioned, or had durable state) but nothing can restore it → conflict
 *     (never fall back to the base)
 */
export interface RestoreFacts {
  /** The published incarnation, as the provider sees it (`null` = none or gone). */
  readonly live: { readonly state: 'running' | 'stopped'; readonly ready: boolean } | null;
  /** Attached (or, without Redis records, linked) archive revision. */
  readonly revision: string | null;
  /** Newest provider-native snapshot checkpoint of this workspace. */
  readonly nativeSnapshot: string | null;
  /** The workspace is known: ever provisioned (an address was published) or had durable state (checkpoints, revisions, migration). */
  readonly hadState: boolean;
  /** Active base snapshot of the lane for the provider. */
  readonly base: { readonly snapshotId: string; readonly version: string } | null;
}

export type RestorePlan =
  | { readonly outcome: 'reused'; readonly source: null }
  | { readonly outcome: 'resumed'; readonly source: null }
  | { readonly outcome: 'restored'; readonly source: string }
  | { readonly outcome: 'restored-native'; readonly source: string }
  | { readonly outcome: 'created-from-base'; readonly source: string; readonly baseVersion: string }
  | { readonly outcome: 'created-empty'; readonly source: null }
  | { readonly outcome: 'conflict'; readonly source: null };

export function planRestore(facts: RestoreFacts): RestorePlan {
  if (facts.live?.state === 'running' && facts.live.ready) return { outcome: 'reused', source: null };
  if (facts.live?.state === 'stopped' && facts.live.ready) return { outcome: 'resumed', source: null };
  if (facts.revision) return { outcome: 'restored', source: facts.revision };
  if (facts.nativeSnapshot) return { outcome: 'restored-native', source: facts.nativeSnapshot };
  if (facts.hadState) return { outcome: 'conflict', source: null };
  if (facts.base) return { outcome: 'created-from-base', source: facts.base.snapshotId, baseVersion: facts.base.version };
  return { outcome: 'created-empty', source: null };
}
