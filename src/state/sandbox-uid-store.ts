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
  `-- Returns the workspace's sandbox uid, allocating the next free one of the range first.
-- KEYS[1] the workspace's uid   KEYS[2] owners hash uid -> workspace   KEYS[3] cursor
-- ARGV[1] workspaceId   ARGV[2] first uid   ARGV[3] last uid
-- Returns the uid, or -1 when every uid of the range is owned. Owners are never removed, so a
-- uid is never handed out twice.
local have = redis.call('GET', KEYS[1])
if have then return tonumber(have) end
local first, last = tonumber(ARGV[2]), tonumber(ARGV[3])
local size = last - first + 1
local cursor = tonumber(redis.call('GET', KEYS[3]) or ARGV[2])
if cursor < first or cursor > last then cursor = first end
for i = 0, size - 1 do
  local uid = first + ((cursor - first + i) % size)
  if redis.call('HSETNX', KEYS[2], uid, ARGV[1]) == 1 then
    redis.call('SET', KEYS[1], uid)
    redis.call('SET', KEYS[3], uid + 1)
    return uid
  end
end
return -1`,
);

export class SandboxUidStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
    private readonly range: UidRange,
  ) {}

  /** The workspace's uid, allocated on first use. */
  async allocate(workspaceId: string): Promise<number> {
    const uid = Number(
      await ALLOCATE.run(this.redis, [this.keys.sandboxUid(workspaceId), this.keys.sandboxUidOwners(), this.keys.sandboxUidCursor()], [workspaceId, this.range.first, this.range.last]),
    );
    if (uid < 0) throw new SandboxUidsExhaustedError(workspaceId, this.range);
    return uid;
  }

  /** The workspace's uid, or null when it never had one. */
  async get(workspaceId: string): Promise<number | null> {
    const raw = await this.redis.get(this.keys.sandboxUid(workspaceId));
    return raw === null ? null : Number(raw);
  }

  /** The workspace owning `uid`, or null. */
  async owner(uid: number): Promise<string | null> {
    return this.redis.hget(this.keys.sandboxUidOwners(), String(uid));
  }
}
