/**
 * `fleet redis migrate-keys`: moves the fleet's Redis state from one key layout to another
 * (FLEET_REDIS_KEY_LAYOUT), with the fleet stopped. Each workspace's keys move whole (DUMP,
 * RESTORE under the new name with its TTL, DEL the old one); the per-bucket indexes move entry by
 * entry to the bucket of the workspace (or uid) each names. Every step can run again: a key
 * already moved is skipped, one moved but not yet deleted is recognised by its identical value,
 * so an interrupted migration is finished by running the command again. A key present under
 * both names with different values is a conflict: it is reported and neither copy is touched.
 *
 * Refused (nothing moved) while a fleet process heartbeats, or, when the queues' names change
 * too, while a queue of the old layout holds waiting, active or delayed work (the next ticks of
 * job schedulers excepted: the GC schedule is re-created when the fleet starts, a workspace's
 * checkpoint scheduler by its next provision).
 */
import { Queue } from 'bullmq';
import type { RedisClient } from '../redis.js';
import type { FleetKeys, KeyLayout } from '../keys.js';
import type { UidRange } from '../config.js';
import { KeyMigrationRefusedError } from '../errors/key-migration-refused-error.js';
import { countLiveWorkers } from '../state/worker-registry.js';
import { discoveredQueueNames } from '../status/queue-names.js';
import { scanKeys } from '../state/scan-keys.js';
import { WorkspaceId } from '../queues/payload.js';
import { INDEX_KINDS, workspaceMoves, type IndexContext, type KeyMove } from './layout-moves.js';

export interface MigrateKeysOptions {
  readonly redis: RedisClient;
  readonly from: FleetKeys;
  readonly to: FleetKeys;
  readonly uidRange: UidRange;
  readonly heartbeatIntervalMs: number;
  readonly dryRun: boolean;
  readonly onProgress?: (done: number, total: number) => void;
}

export interface MigrateKeysResult {
  readonly from: KeyLayout;
  readonly to: KeyLayout;
  readonly dryRun: boolean;
  readonly workspaces: number;
  /** Keys moved (or, in a dry run, that would move). */
  readonly keysMoved: number;
  /** Index entries moved to another bucket's index (or that would). */
  readonly indexEntriesMoved: number;
  /** Next ticks of job schedulers left under the old queue names: the GC schedule is re-created when the fleet starts, a workspace's checkpoint scheduler by its next provision. */
  readonly scheduledTicksLeft: number;
  /** Keys present under both names with different values: neither copy was touched. */
  readonly conflicts: readonly KeyMove[];
  /** Index entries naming no valid workspace (or uid): left where they were. */
  readonly unplaced: readonly { readonly index: string; readonly entry: string }[];
}

type MoveOutcome = 'moved' | 'absent' | 'conflict';

export async function migrateKeys(options: MigrateKeysOptions): Promise<MigrateKeysResult> {
  const { redis, from, to, dryRun } = options;
  const live = await countLiveWorkers(redis, from, options.heartbeatIntervalMs);
  if (live > 0) throw new KeyMigrationRefusedError(`${live} fleet process(es) still heartbeat: stop every fleet process before migrating keys`, { context: { liveWorkers: live } });
  const scheduledTicksLeft = await checkQueuesIdle(redis, from, to);

  const workspaces = await workspacesOf(redis, from);
  const conflicts: KeyMove[] = [];
  const owners = new Map<string, string>();
  let keysMoved = 0;
  for (const [i, ws] of workspaces.entries()) {
    // Checkpoint ids from either name of the set (a run interrupted after moving it).
    const ids = new Set([...(await redis.zrange(from.checkpoints(ws), '0', '-1')), ...(await redis.zrange(to.checkpoints(ws), '0', '-1'))]);
    for (const id of ids) owners.set(id, ws);
    for (const move of workspaceMoves(from, to, ws, [...ids])) {
      const outcome = await moveKey(redis, move, dryRun);
      if (outcome === 'moved') keysMoved += 1;
      if (outcome === 'conflict') conflicts.push(move);
    }
    options.onProgress?.(i + 1, workspaces.length);
  }

  const context: IndexContext = { uidRange: options.uidRange, checkpointOwner: (id) => owners.get(id) ?? null };
  const unplaced: { index: string; entry: string }[] = [];
  let indexEntriesMoved = 0;
  for (const kind of INDEX_KINDS) {
    for (let b = 0; b < from.buckets; b++) {
      const source = kind.key(from, b);
      const entries = kind.type === 'zset' ? pairs(await redis.zrange(source, '0', '-1', 'WITHSCORES')) : Object.entries(await redis.hgetall(source));
      const moved: string[] = [];
      for (const [entry, value] of entries) {
        const bucket = kind.target(to, entry, context);
        if (bucket === null) {
          unplaced.push({ index: source, entry });
          continue;
        }
        const target = kind.key(to, bucket);
        if (target === source) continue;
        if (!dryRun) await (kind.type === 'zset' ? redis.zadd(target, value, entry) : redis.hset(target, entry, value));
        moved.push(entry);
      }
      if (!dryRun && moved.length > 0) await (kind.type === 'zset' ? redis.zrem(source, ...moved) : redis.hdel(source, ...moved));
      indexEntriesMoved += moved.length;
    }
  }
  // The uid cursors only speed up the next allocation: the new layout starts its own.
  for (let b = 0; b < from.buckets; b++) {
    const cursor = from.sandboxUidCursor(b);
    if (!dryRun && !Array.from({ length: to.buckets }, (_, t) => to.sandboxUidCursor(t)).includes(cursor)) await redis.del(cursor);
  }
  return { from: from.layout, to: to.layout, dryRun, workspaces: workspaces.length, keysMoved, indexEntriesMoved, scheduledTicksLeft, conflicts, unplaced };
}

// Moves one key (idempotent: see the header).
async function moveKey(redis: RedisClient, move: KeyMove, dryRun: boolean): Promise<MoveOutcome> {
  const payload = await redis.dumpBuffer(move.from);
  if (payload === null) return 'absent';
  const existing = await redis.dumpBuffer(move.to);
  if (existing !== null && !existing.equals(payload)) return 'conflict';
  if (dryRun) return 'moved';
  if (existing === null) {
    const ttl = await redis.pttl(move.from);
    await redis.restore(move.to, ttl > 0 ? ttl : 0, payload);
  }
  await redis.del(move.from);
  return 'moved';
}

// Every workspace with a key of its own, or an entry in the workspaces index, under `from`.
async function workspacesOf(redis: RedisClient, from: FleetKeys): Promise<string[]> {
  const found = new Set<string>();
  await scanKeys(redis, from.workspaceKeyPattern(), (key) => {
    const ws = from.workspaceOfKey(key);
    if (ws !== null && WorkspaceId.safeParse(ws).success) found.add(ws);
  });
  for (let b = 0; b < from.buckets; b++) for (const ws of await redis.zrange(from.workspaces(b), '0', '-1')) if (WorkspaceId.safeParse(ws).success) found.add(ws);
  return [...found].sort();
}

// When the queue names change, the old queues must hold no work; returns the scheduler ticks they keep.
async function checkQueuesIdle(redis: RedisClient, from: FleetKeys, to: FleetKeys): Promise<number> {
  let ticks = 0;
  for (const name of await discoveredQueueNames(redis, from)) {
    if (from.queuePrefix(name) === to.queuePrefix(name)) continue;
    const queue = new Queue(name, { connection: redis, prefix: from.queuePrefix(name) });
    queue.on('error', () => undefined);
    try {
      const counts = await queue.getJobCounts('wait', 'active', 'prioritized', 'waiting-children', 'delayed');
      // A delayed job of a job scheduler is its next tick (work not yet due); any other delayed job is a retry waiting out its backoff.
      let scheduled = 0;
      for (let start = 0; start < counts.delayed!; start += 1_000) {
        scheduled += (await queue.getDelayed(start, start + 999)).filter((job) => Boolean(job?.repeatJobKey)).length;
      }
      const busy = counts.wait! + counts.active! + counts.prioritized! + counts['waiting-children']! + counts.delayed! - scheduled;
      if (busy > 0) {
        throw new KeyMigrationRefusedError(`queue ${name} still holds ${busy} job(s) (${JSON.stringify(counts)}): let the fleet finish them, or drain the queue, before migrating keys`, { context: { queue: name, counts } });
      }
      ticks += scheduled;
    } finally {
      await queue.close().catch(() => undefined);
    }
  }
  return ticks;
}

// ZRANGE WITHSCORES reply → [member, score] pairs.
function pairs(reply: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < reply.length; i += 2) out.push([reply[i]!, reply[i + 1]!]);
  return out;
}
