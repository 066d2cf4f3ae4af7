/**
 * The sandbox uid of every workspace: handed out once from `FLEET_SANDBOX_UID_RANGE`, kept for
 * the workspace's whole life (every generation, every host) and never given to another
 * workspace, not even after a reset. The local provider runs the workspace's commands and owns
 * its live tree as that uid, so two workspaces never share file ownership or an RLIMIT_NPROC
 * count. One Lua script allocates: two workspaces racing can never get the same uid.
 */
import type { RedisClient } from '../redis.js';
import type { UidRange } from '../config.js';
import { SandboxUidsExhaustedError } from '../errors/sandbox-uids-exhausted-error.js';
import type { FleetKeys } from '../keys.js';
import { luaScript } from '../lib/lua-script.js';

const ALLOCATE = luaScript(
  'allocate-sandbox-uid',
  `-- Returns the workspace's sandbox uid, allocating the next free one of its share of the range first.
-- KEYS[1] the workspace's uid   KEYS[2] owners hash uid -> workspace   KEYS[3] cursor
-- ARGV[1] workspaceId   ARGV[2] first uid   ARGV[3] last uid   ARGV[4] offset   ARGV[5] stride
-- The share is first + offset + k * stride (the whole range with offset 0, stride 1).
-- Returns the uid, or -1 when every uid of the share is owned. Owners are never removed, so a
-- uid is never handed out twice.
local have = redis.call('GET', KEYS[1])
if have then return tonumber(have) end
local last, stride = tonumber(ARGV[3]), tonumber(ARGV[5])
local base = tonumber(ARGV[2]) + tonumber(ARGV[4])
if base > last then return -1 end
local count = math.floor((last - base) / stride) + 1
local cursor = tonumber(redis.call('GET', KEYS[3]) or base)
local start = 0
if cursor >= base and cursor <= last then start = math.floor((cursor - base + stride - 1) / stride) % count end
for i = 0, count - 1 do
  local uid = base + ((start + i) % count) * stride
  if redis.call('HSETNX', KEYS[2], uid, ARGV[1]) == 1 then
    redis.call('SET', KEYS[1], uid)
    redis.call('SET', KEYS[3], uid + stride)
    return uid
  end
end
return -1`,
);

/**
 * Under the sharded key layout each bucket allocates from its own share of the range (every
 * `buckets`-th uid, starting at `first + bucket`), so the allocation stays one script in the
 * workspace's slot and two buckets never hand out the same uid. The share of a uid is its
 * bucket's owners hash.
 */
export const uidShare = (range: UidRange, buckets: number, uid: number): number => (((uid - range.first) % buckets) + buckets) % buckets;

export class SandboxUidStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
    private readonly range: UidRange,
  ) {}

  /** The workspace's uid, allocated on first use. */
  async allocate(workspaceId: string): Promise<number> {
    const bucket = this.keys.bucket(workspaceId);
    const uid = Number(
      await ALLOCATE.run(
        this.redis,
        [this.keys.sandboxUid(workspaceId), this.keys.sandboxUidOwners(bucket), this.keys.sandboxUidCursor(bucket)],
        [workspaceId, this.range.first, this.range.last, bucket, this.keys.buckets],
      ),
    );
    if (uid < 0) throw new SandboxUidsExhaustedError(workspaceId, this.range, this.keys.buckets > 1 ? { bucket, buckets: this.keys.buckets } : undefined);
    return uid;
  }

  /** The workspace's uid, or null when it never had one. */
  async get(workspaceId: string): Promise<number | null> {
    const raw = await this.redis.get(this.keys.sandboxUid(workspaceId));
    return raw === null ? null : Number(raw);
  }

  /** The workspace owning `uid`, or null. */
  async owner(uid: number): Promise<string | null> {
    return this.redis.hget(this.keys.sandboxUidOwners(uidShare(this.range, this.keys.buckets, uid)), String(uid));
  }
}
