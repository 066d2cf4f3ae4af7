/**
 * Pure builders of every Redis key the fleet touches (and of the few BullMQ keys it reads). Every
 * key derives from the configured hash-tagged prefix (e.g. `{fleet}`): in the default layout all
 * of them land in one Redis Cluster slot; in the others each key's tag is chosen so that every
 * multi-key Lua script still touches one slot. Nothing else builds a key, and a key's name never
 * changes (existing deployments read it; test/unit/keys.test.ts pins them).
 *
 * Queues follow the key layout (FLEET_REDIS_KEY_LAYOUT): under `single-slot` every BullMQ queue
 * uses the prefix as it is; under `per-queue` each queue's prefix carries a tag of its own, the
 * prefix's tag plus `:<queue>` (`{fleet}` → `{fleet:persist@host-a}`), so BullMQ keeps each queue
 * in one slot (its scripts need that) while a cluster spreads the queues over its masters. The
 * fleet's own keys keep the prefix in both layouts.
 *
 * Under `sharded` the queues are laid out as under `per-queue`, and the state of each workspace
 * moves to its bucket's tag (`{fleet}` → `{fleet/ws17}`, bucket = FNV-1a(workspace id) mod
 * WORKSPACE_BUCKETS): address, generation, runtime, intents, checkpoints, quota, uid, locks, and
 * the fleet-wide indexes that the workspace's scripts write beside its state (the workspaces
 * index, pending creates, the over-quota set, the unattached checkpoints, the migration marks, the
 * uid owners and cursor) become one index per bucket. So every script touches one slot, and a
 * cluster spreads both the queues and the workspaces over its masters. Fleet-wide records (hosts,
 * workers, bases, metrics, events) keep the prefix's tag. Index builders take the bucket
 * (`keys.bucket(workspaceId)`, or 0..buckets-1 to read them all); under the other layouts there is
 * one bucket, 0, and the keys are the historical ones.
 */
export type KeyLayout = 'single-slot' | 'per-queue' | 'sharded';

/** How many workspace buckets the `sharded` layout spreads workspace state over (a storage format: changing it would rename every workspace key). */
export const WORKSPACE_BUCKETS = 128;

/** Stable bucket of a workspace id: FNV-1a (32 bit) of its UTF-8 bytes, modulo `buckets`. */
export function workspaceBucket(workspaceId: string, buckets: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(workspaceId, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % buckets;
}

/** Workspace resources whose lock lives with the workspace's state (`<kind>:<workspaceId>`). */
const WORKSPACE_LOCK = /^(provision|persist):([^:]+)$/;

export interface FleetKeys {
  readonly prefix: string;
  readonly layout: KeyLayout;
  /** How many workspace buckets there are (1 unless `sharded`). */
  readonly buckets: number;
  /** The bucket of a workspace (always 0 unless `sharded`). */
  bucket(workspaceId: string): number;
  /** The BullMQ `prefix` option of a queue (its Queue, Worker, QueueEvents). */
  queuePrefix(queue: string): string;
  /** Address store hash: handle, generation, hostId, provider, publishedAt. */
  address(workspaceId: string): string;
  /** Generation counter of a workspace (only ever increases). */
  generation(workspaceId: string): string;
  /** Runtime resource hash (state machine of seed 000). */
  runtime(workspaceId: string): string;
  /** Sorted set of incarnations being created (`<workspace>:g<generation>`) scored by lease expiry (ms), of one bucket. */
  pendingCreates(bucket: number): string;
  /** Merged pending persist request of a workspace (see persist-intent). */
  persistIntent(workspaceId: string): string;
  /** Outcome of the last persist run of a workspace, read by waiters. */
  persistStatus(workspaceId: string): string;
  /** Sequence number a persist worker merged for one job of another producer (see persist-intent). */
  persistClaim(workspaceId: string, bullQueue: string, jobId: string): string;
  /** Key the web process writes (with a TTL) to prove Redis accepts writes (`/readyz`). */
  readinessProbe(): string;
  /** Sorted set of known workspaces scored by last activity (ms), of one bucket. */
  workspaces(bucket: number): string;
  /** Sorted set of what keeps a workspace busy (open turns, running execs and file operations) scored by lease expiry (ms). */
  activity(workspaceId: string): string;
  /** Quota usage hash of a workspace: bytes, files (the last persist's revision plus API writes since), measuredAt. */
  quotaUsage(workspaceId: string): string;
  /** Sorted set of workspaces over their quota, scored by when they went over (ms), of one bucket. */
  overQuota(bucket: number): string;
  /** Checkpoint record hash (in the bucket of its workspace). */
  checkpoint(bucket: number, checkpointId: string): string;
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
  /** Sorted set of the unattached checkpoint ids of one bucket scored by creation time (GC index). */
  unattached(bucket: number): string;
  /** A key of BullMQ's own layout for a queue (`<prefix>:<queue>:<type>`, e.g. `events`, `id`), for the reads BullMQ has no call for. */
  bullQueue(queue: string, type: string): string;
  /** Glob matching the job-id counter (`id`) of every BullMQ queue under the prefix. */
  bullQueueIdPattern(): string;
  /** The queue name of a key matched by `bullQueueIdPattern`. */
  bullQueueOfIdKey(key: string): string;
  /** Glob of every key of a workspace's own state under this layout (for SCAN; see `fleet redis migrate-keys`). */
  workspaceKeyPattern(): string;
  /** The workspace a key matched by `workspaceKeyPattern` belongs to, or null for any other key. */
  workspaceOfKey(key: string): string | null;
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
  /** Hash of migration state: workspace → migrated-at, of one bucket. */
  migrated(bucket: number): string;
  /** Cursor and lease of the backfill sweep. */
  backfillSweep(): string;
  /** Lease of the backfill sweep of one source (a token with a TTL). */
  backfillSweepLease(source: string): string;
  /** The sandbox uid of a workspace (set once, never changed; see sandbox-uid-store). */
  sandboxUid(workspaceId: string): string;
  /** Hash uid → workspace of every sandbox uid of one bucket's share of the range ever handed out (never reused). */
  sandboxUidOwners(bucket: number): string;
  /** Next uid to try in one bucket's share (the allocation cursor). */
  sandboxUidCursor(bucket: number): string;
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
  const queuePrefix = layout === 'single-slot' ? () => p : (queue: string) => `${before}{${tag}:${queue}}${after}`;
  const sharded = layout === 'sharded';
  const buckets = sharded ? WORKSPACE_BUCKETS : 1;
  const bucket = sharded ? (ws: string) => workspaceBucket(ws, buckets) : () => 0;
  // The prefix of a bucket's keys (the prefix itself unless sharded).
  const inBucket = sharded ? (b: number) => `${before}{${tag}/ws${b}}${after}` : () => p;
  const w = (ws: string) => `${inBucket(bucket(ws))}:ws:${ws}`;
  return Object.freeze({
    prefix: p,
    layout,
    buckets,
    bucket,
    queuePrefix,
    address: (ws: string) => `${w(ws)}:addr`,
    generation: (ws: string) => `${w(ws)}:gen`,
    runtime: (ws: string) => `${w(ws)}:runtime`,
    pendingCreates: (b: number) => `${inBucket(b)}:pending-creates`,
    persistIntent: (ws: string) => `${w(ws)}:persist-intent`,
    persistStatus: (ws: string) => `${w(ws)}:persist-status`,
    persistClaim: (ws: string, queue: string, jobId: string) => `${inBucket(bucket(ws))}:persist-claim:${queue}:${jobId}`,
    readinessProbe: () => `${p}:readyz-probe`,
    workspaces: (b: number) => `${inBucket(b)}:workspaces`,
    activity: (ws: string) => `${w(ws)}:activity`,
    quotaUsage: (ws: string) => `${w(ws)}:quota-usage`,
    overQuota: (b: number) => `${inBucket(b)}:over-quota`,
    checkpoint: (b: number, id: string) => `${inBucket(b)}:ckpt:${id}`,
    checkpoints: (ws: string) => `${w(ws)}:ckpts`,
    head: (ws: string) => `${w(ws)}:head`,
    attached: (ws: string) => `${w(ws)}:attached`,
    attachSeq: (ws: string) => `${w(ws)}:attach-seq`,
    checkpointIndex: (ws: string) => `${w(ws)}:ckpt-index`,
    unattached: (b: number) => `${inBucket(b)}:ckpt-unattached`,
    bullQueue: (queue: string, type: string) => `${queuePrefix(queue)}:${queue}:${type}`,
    bullQueueIdPattern: () => (layout === 'single-slot' ? `${globLiteral(p)}:*:id` : `${globLiteral(before)}{${globLiteral(tag)}:*}${globLiteral(after)}:*:id`),
    bullQueueOfIdKey: (key: string) => {
      if (layout === 'single-slot') return key.slice(p.length + 1, -':id'.length);
      // `<before>{<tag>:<queue>}<after>:<queue>:id`: the queue as the tag names it.
      const inTag = key.slice(before.length + tag.length + 2);
      return inTag.slice(0, inTag.indexOf('}'));
    },
    workspaceKeyPattern: () => (sharded ? `${globLiteral(before)}{${globLiteral(tag)}/ws*}${globLiteral(after)}:ws:*` : `${globLiteral(p)}:ws:*`),
    workspaceOfKey: (key: string) => {
      let rest: string;
      if (sharded) {
        const open = `${before}{${tag}/ws`;
        const close = key.indexOf(`}${after}:ws:`, open.length);
        if (!key.startsWith(open) || close < 0 || !/^\d+$/.test(key.slice(open.length, close))) return null;
        rest = key.slice(close + after.length + 5);
      } else {
        if (!key.startsWith(`${p}:ws:`)) return null;
        rest = key.slice(p.length + 4);
      }
      const end = rest.indexOf(':');
      return end > 0 ? rest.slice(0, end) : null;
    },
    lock: (resource: string) => {
      const owned = sharded ? WORKSPACE_LOCK.exec(resource) : null;
      return `${owned ? inBucket(bucket(owned[2]!)) : p}:lock:${resource}`;
    },
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
    migrated: (b: number) => `${inBucket(b)}:migrated`,
    backfillSweep: () => `${p}:backfill:sweep`,
    backfillSweepLease: (source: string) => `${p}:backfill:sweep:${source}:lease`,
    sandboxUid: (ws: string) => `${w(ws)}:sandbox-uid`,
    sandboxUidOwners: (b: number) => `${inBucket(b)}:sandbox-uids`,
    sandboxUidCursor: (b: number) => `${inBucket(b)}:sandbox-uid-cursor`,
    storeWriters: () => `${p}:store-writers`,
    verifyCursor: () => `${p}:verify:cursor`,
    execOutput: (id: string) => `${p}:exec-out:${id}`,
    events: () => `${p}:events`,
  });
}
