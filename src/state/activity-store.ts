/**
 * What keeps a workspace busy, for the idle reaper (issue 19.3). A workspace is *idle* only when
 * it is quiescent: no turn open, no exec or file operation running, and no activity recorded for
 * FLEET_IDLE_TTL_MS. Each holder is a lease in the workspace's activity set:
 *
 * - `turn:<turnId>`: opened and closed explicitly by the app; it expires after the turn TTL
 *   unless opened again (a crashed app cannot keep a workspace awake forever);
 * - `op:<kind>:<id>`: an exec or file operation, renewed while it runs by the process running it
 *   and expiring soon after that process dies.
 *
 * Callers also record activity (the address store's `touch`) when a holder starts and ends, so
 * the idle TTL counts from the end of the last turn or operation.
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import type { Logger } from '../logger.js';
import { luaScript } from '../lib/lua-script.js';

const HOLD = luaScript(
  'activity-hold',
  `-- Takes or renews a lease that keeps a workspace busy (expired leases are dropped first).
-- KEYS[1] activity zset   ARGV: member, expiry (ms), now (ms)
-- Returns the number of live holders.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return redis.call('ZCARD', KEYS[1])`,
);

const RENEW = luaScript(
  'activity-renew',
  `-- Extends a lease that still exists (a released or expired one is not revived).
-- KEYS[1] activity zset   ARGV: member, expiry (ms), now (ms)
-- Returns 1 when renewed, 0 when the lease is gone.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) <= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1`,
);

const LIVE_HOLDERS = luaScript(
  'activity-live-holders',
  `-- Drops expired leases and counts the live ones.
-- KEYS[1] activity zset   ARGV: now (ms)
-- Returns the number of live holders.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
return redis.call('ZCARD', KEYS[1])`,
);

/** Kinds of operations that keep a workspace busy while they run. */
export type ActivityKind = 'exec' | 'writeFiles' | 'readFile';

/** A running operation's lease: renewed until `end()`. */
export interface ActivityLease {
  end(): Promise<void>;
}

/** What holds a workspace awake right now. */
export interface ActivityView {
  readonly openTurns: readonly string[];
  readonly operations: number;
}

export class ActivityStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
    private readonly options: { readonly turnTtlMs: number; readonly leaseMs: number; readonly logger?: Logger },
  ) {}

  /** Opens (or re-opens, extending) a turn: the workspace is not idle until it closes or expires. */
  async openTurn(workspaceId: string, turnId: string, ttlMs = this.options.turnTtlMs, now = Date.now()): Promise<void> {
    await HOLD.run(this.redis, [this.keys.activity(workspaceId)], [`turn:${turnId}`, now + ttlMs, now]);
  }

  /** Closes a turn; returns false when it was not open (closed before, or expired). */
  async closeTurn(workspaceId: string, turnId: string, now = Date.now()): Promise<boolean> {
    const score = await this.redis.zscore(this.keys.activity(workspaceId), `turn:${turnId}`);
    const removed = await this.redis.zrem(this.keys.activity(workspaceId), `turn:${turnId}`);
    return removed === 1 && score !== null && Number(score) > now;
  }

  /** Starts an operation that keeps the workspace busy; its lease is renewed until `end()`. */
  async begin(workspaceId: string, kind: ActivityKind): Promise<ActivityLease> {
    const member = `op:${kind}:${randomUUID()}`;
    const { leaseMs } = this.options;
    await HOLD.run(this.redis, [this.keys.activity(workspaceId)], [member, Date.now() + leaseMs, Date.now()]);
    const timer = setInterval(() => {
      const now = Date.now();
      RENEW.run(this.redis, [this.keys.activity(workspaceId)], [member, now + leaseMs, now]).catch((error: unknown) =>
        this.options.logger?.warn({ err: error, workspaceId }, 'renewing an activity lease failed'),
      );
    }, Math.max(50, Math.floor(leaseMs / 3)));
    timer.unref();
    let ended: Promise<void> | null = null;
    return {
      end: () =>
        (ended ??= (async () => {
          clearInterval(timer);
          await this.redis.zrem(this.keys.activity(workspaceId), member);
        })()),
    };
  }

  /** Runs `fn` as an operation that keeps the workspace busy. */
  async during<T>(workspaceId: string, kind: ActivityKind, fn: () => Promise<T>): Promise<T> {
    const lease = await this.begin(workspaceId, kind);
    try {
      return await fn();
    } finally {
      await lease.end().catch((error: unknown) => this.options.logger?.warn({ err: error, workspaceId }, 'ending an activity lease failed'));
    }
  }

  /** True when no turn is open and no operation runs (the idle TTL is the address store's). */
  async quiescent(workspaceId: string, now = Date.now()): Promise<boolean> {
    return Number(await LIVE_HOLDERS.run(this.redis, [this.keys.activity(workspaceId)], [now])) === 0;
  }

  /** The open turns and the number of running operations. */
  async view(workspaceId: string, now = Date.now()): Promise<ActivityView> {
    const members = await this.redis.zrangebyscore(this.keys.activity(workspaceId), `(${now}`, '+inf');
    return {
      openTurns: members.filter((m) => m.startsWith('turn:')).map((m) => m.slice('turn:'.length)),
      operations: members.filter((m) => m.startsWith('op:')).length,
    };
  }
}
