/**
 * Pure builders of every Redis key the fleet touches (and of the few BullMQ keys it reads). All
 * keys start with the configured hash-tagged prefix (e.g. `{fleet}`) so that every key lands in
 * one Redis Cluster slot and multi-key Lua scripts stay legal. Nothing else builds a key, and a
 * key's name never changes (existing deployments read it; test/unit/keys.test.ts pins them).
 *
 * Queues follow the key layout (FLEET_REDIS_KEY_LAYOUT): under `single-slot` every BullMQ queue
 * uses the prefix as it is; under `per-queue` each queue's prefix carries a tag of its own, the
 * prefix's tag plus `:<queue>` (`{fleet}` → `{fleet:persist@host-a}`), so BullMQ keeps each queue
 * in one slot (its scripts need that) while a cluster spreads the queues over its masters. The
 * fleet's own keys keep the prefix in both layouts.
 */
export type KeyLayout = 'single-slot' | 'per-queue';

export interface FleetKeys {
  readonly prefix: string;
  readonly layout: KeyLayout;
  /** The BullMQ `prefix` option of a queue (its Queue, Worker, QueueEvents). */
  queuePrefix(queue: string): string;
  /** Address store hash: handle, generation, hostId, provider, publishedAt. */
  address(workspaceId: string): string;
  /** Generation counter of a workspace (only ever increases). */
  generation(workspaceId: string): string;
  /** Runtime resource hash (state machine of seed 000). */
  runtime(workspaceId: string): string;
  /** Sorted set of incarnations being created (`<workspace>:g<generation>`) scored by lease expiry (ms). */
  pendingCreates(): string;
  /** Merged pending persist request of a workspace (see persist-intent). */
  persistIntent(workspaceId: string): string;
  /** Outcome of the last persist run of a workspace, read by waiters. */
  persistStatus(workspaceId: string): string;
  /** Sequence number a persist worker merged for one job of another producer (see persist-intent). */
  persistClaim(bullQueue: string, jobId: string): string;
  /** Key the web process writes (with a TTL) to prove Redis accepts writes (`/readyz`). */
  readinessProbe(): string;
  /** Sorted set of known workspaces scored by last activity (ms). */
  workspaces(): string;
  /** Sorted set of what keeps a workspace busy (open turns, running execs and file operations) scored by lease expiry (ms). */
  activity(workspaceId: string): string;
  /** Quota usage hash of a workspace: bytes, files (the last persist's revision plus API writes since), measuredAt. */
  quotaUsage(workspaceId: string): string;
  /** Sorted set of workspaces over their quota, scored by when they went over (ms). */
  overQuota(): string;
  /** Checkpoint record hash. */
  checkpoint(checkpointId: string): string;
  /** Sorted set of a workspace's checkpoint ids scored by creation time. */
  checkpoints(workspaceId: string): string;
  /** Attached (current) checkpoint id of a workspace. */
  head(workspaceId: string): string;
  /** Sorted set of a workspace's attached checkpoint ids scored by attach sequence. */
  attached(workspaceId: string): string;
  /** Counter of a workspace's attaches (the score of the attached set). */
  attachSeq(workspaceId: string): string;
  /** Hash `<kind>|<revision>` → checkpoint id of a workspace (a revision is recorded once). */
  checkpointIndex(workspaceId: string): string;
  /** Sorted set of all unattached checkpoint ids scored by creation time (GC index). */
  unattached(): string;
  /** A key of BullMQ's own layout for a queue (`<prefix>:<queue>:<type>`, e.g. `events`, `id`), for the reads BullMQ has no call for. */
  bullQueue(queue: string, type: string): string;
  /** Glob matching the job-id counter (`id`) of every BullMQ queue under the prefix. */
  bullQueueIdPattern(): string;
  /** The queue name of a key matched by `bullQueueIdPattern`. */
  bullQueueOfIdKey(key: string): string;
  /** Redlock resource key. */
  lock(resource: string): string;
  /** Sorted set of live worker processes scored by last heartbeat (ms). */
  workers(): string;
  /** Hash describing one worker process (host, pid, queues), expiring with its heartbeat. */
  worker(workerId: string): string;
  /** Sorted set of hosts scored by last heartbeat (ms). */
  hosts(): string;
  /** Sorted set of hosts serving local sandboxes (their hostops queue), scored by heartbeat (ms). */
  sandboxHosts(): string;
  /** Hash describing one host (capacity, load, started-at). */
  host(hostId: string): string;
  /** Fleet-wide counters (fence rejections, ...). */
  counters(): string;
  /** Hash of fleet-wide metric counters and histogram buckets written by every process (see metrics/). */
  metrics(): string;
  /** Base snapshot registry entry. */
  base(snapshotId: string): string;
  /** Sorted set of all base snapshot ids scored by creation time. */
  bases(): string;
  /** Set of workspaces that started from a base snapshot (provenance index for retirement). */
  baseRefs(snapshotId: string): string;
  /** The ready base snapshot id of a manifest hash on a provider (bake reuse). */
  baseByHash(provider: string, manifestHash: string): string;
  /** Hash lane → active base snapshot id. */
  activeBases(): string;
  /** Counter of bakes (the generation of each bake's seed sandbox). */
  bakeSeq(): string;
  /** Hash of migration state: workspace → migrated-at. */
  migrated(): string;
  /** Cursor and lease of the backfill sweep. */
  backfillSweep(): string;
  /** Lease of the backfill sweep of one source (a token with a TTL). */
  backfillSweepLease(source: string): string;
  /** The sandbox uid of a workspace (set once, never changed; see sandbox-uid-store). */
  sandboxUid(workspaceId: string): string;
  /** Hash uid → workspace of every sandbox uid ever handed out (never reused). */
  sandboxUidOwners(): string;
  /** Next uid to try (the allocation cursor). */
  sandboxUidCursor(): string;
  /** Hash token → writer of the shared object store in flight (see state/store-writers). */
  storeWriters(): string;
  /** Where the next `--read-data-subset` slice of the object id space starts (see state/verify-cursor). */
  verifyCursor(): string;
  /** Stream of one exec's output chunks, appended by the host running it, read by the caller on another host (see state/exec-output-store). */
  execOutput(execId: string): string;
  /** Stream of fleet events (provisioned, persisted, failed, reaped, ...) served by `GET /v1/events` (see state/event-store). */
  events(): string;
}

// Escapes a literal for a Redis glob pattern.
const globLiteral = (text: string) => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

// The prefix split around its hash tag: `a{tag}b` → ['a', 'tag', 'b'].
function splitTag(prefix: string): [string, string, string] {
  const open = prefix.indexOf('{');
  const close = prefix.indexOf('}', open + 1);
  if (open < 0 || close < 0) throw new Error(`key prefix ${JSON.stringify(prefix)} has no {hash-tag}`);
  return [prefix.slice(0, open), prefix.slice(open + 1, close), prefix.slice(close + 1)];
}

/** Builds the key set for a prefix and a key layout. */
export function fleetKeys(prefix: string, layout: KeyLayout = 'single-slot'): FleetKeys {
  const p = prefix;
  const [before, tag, after] = splitTag(p);
  const queuePrefix = layout === 'per-queue' ? (queue: string) => `${before}{${tag}:${queue}}${after}` : () => p;
  return Object.freeze({
    prefix: p,
    layout,
    queuePrefix,
    address: (ws: string) => `${p}:ws:${ws}:addr`,
    generation: (ws: string) => `${p}:ws:${ws}:gen`,
    runtime: (ws: string) => `${p}:ws:${ws}:runtime`,
    pendingCreates: () => `${p}:pending-creates`,
    persistIntent: (ws: string) => `${p}:ws:${ws}:persist-intent`,
    persistStatus: (ws: string) => `${p}:ws:${ws}:persist-status`,
    persistClaim: (queue: string, jobId: string) => `${p}:persist-claim:${queue}:${jobId}`,
    readinessProbe: () => `${p}:readyz-probe`,
    workspaces: () => `${p}:workspaces`,
    activity: (ws: string) => `${p}:ws:${ws}:activity`,
    quotaUsage: (ws: string) => `${p}:ws:${ws}:quota-usage`,
    overQuota: () => `${p}:over-quota`,
    checkpoint: (id: string) => `${p}:ckpt:${id}`,
    checkpoints: (ws: string) => `${p}:ws:${ws}:ckpts`,
    head: (ws: string) => `${p}:ws:${ws}:head`,
    attached: (ws: string) => `${p}:ws:${ws}:attached`,
    attachSeq: (ws: string) => `${p}:ws:${ws}:attach-seq`,
    checkpointIndex: (ws: string) => `${p}:ws:${ws}:ckpt-index`,
    unattached: () => `${p}:ckpt-unattached`,
    bullQueue: (queue: string, type: string) => `${queuePrefix(queue)}:${queue}:${type}`,
    bullQueueIdPattern: () => (layout === 'per-queue' ? `${globLiteral(before)}{${globLiteral(tag)}:*}${globLiteral(after)}:*:id` : `${globLiteral(p)}:*:id`),
    bullQueueOfIdKey: (key: string) => {
      if (layout !== 'per-queue') return key.slice(p.length + 1, -':id'.length);
      // `<before>{<tag>:<queue>}<after>:<queue>:id`: the queue as the tag names it.
      const inTag = key.slice(before.length + tag.length + 2);
      return inTag.slice(0, inTag.indexOf('}'));
    },
    lock: (resource: string) => `${p}:lock:${resource}`,
    workers: () => `${p}:workers`,
    worker: (id: string) => `${p}:workers:${id}`,
    hosts: () => `${p}:hosts`,
    host: (hostId: string) => `${p}:host:${hostId}`,
    sandboxHosts: () => `${p}:sandbox-hosts`,
    counters: () => `${p}:counters`,
    metrics: () => `${p}:metrics`,
    base: (id: string) => `${p}:base:${id}`,
    bases: () => `${p}:bases`,
    baseRefs: (id: string) => `${p}:base:${id}:refs`,
    baseByHash: (provider: string, hash: string) => `${p}:bases:hash:${provider}:${hash}`,
    activeBases: () => `${p}:bases:active`,
    bakeSeq: () => `${p}:bake-seq`,
    migrated: () => `${p}:migrated`,
    backfillSweep: () => `${p}:backfill:sweep`,
    backfillSweepLease: (source: string) => `${p}:backfill:sweep:${source}:lease`,
    sandboxUid: (ws: string) => `${p}:ws:${ws}:sandbox-uid`,
    sandboxUidOwners: () => `${p}:sandbox-uids`,
    sandboxUidCursor: () => `${p}:sandbox-uid-cursor`,
    storeWriters: () => `${p}:store-writers`,
    verifyCursor: () => `${p}:verify:cursor`,
    execOutput: (id: string) => `${p}:exec-out:${id}`,
    events: () => `${p}:events`,
  });
}
