// Fault injection: the next N requests to a route misbehave, so tests can drive the provider's
// error classification through the real SDK.
export type StandinFault =
  /** Never answer (until the client gives up or the stand-in closes): a timeout. */
  | { readonly kind: 'hang' }
  /** Answer with `status` and the API error body. */
  | { readonly kind: 'status'; readonly status: number; readonly code?: string; readonly message?: string; readonly retryAfterSeconds?: number }
  /** Destroy the connection without answering. */
  | { readonly kind: 'drop' };

export class StandinFaults {
  private readonly queued = new Map<string, { fault: StandinFault; left: number }[]>();

  /** Makes the next `times` requests to `route` fail with `fault`. */
  add(route: string, fault: StandinFault, times = 1): void {
    const list = this.queued.get(route) ?? [];
    list.push({ fault, left: times });
    this.queued.set(route, list);
  }

  /** The fault for this request of `route`, if one is queued (consumes one use). */
  take(route: string): StandinFault | undefined {
    const list = this.queued.get(route);
    const head = list?.[0];
    if (!list || !head) return undefined;
    head.left -= 1;
    if (head.left <= 0) list.shift();
    return head.fault;
  }

  /** Uses left for `route`. */
  pending(route: string): number {
    return (this.queued.get(route) ?? []).reduce((sum, item) => sum + item.left, 0);
  }

  clear(): void {
    this.queued.clear();
  }
}
