/**
 * The Redis half of `fleet workspace reset` as one fenced script (issue 19.6): every record of a
 * workspace goes in one step, checked against the generation the reset bumped and against the
 * checkpoint list the caller read (a checkpoint recorded meanwhile makes the caller read again).
 *
 * What goes: the address, the runtime record, the activity leases, the persist intent, the
 * checkpoint records (hashes, per-workspace sets, head, revision index, attach counter, their
 * entries in the GC index) and the migration mark. What stays: the generation counter (it only
 * ever increases; the reset bumped it) and the persist status's `lastSeq` (never reset: request
 * sequence numbers of waiters and job claims stay unique).
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import { luaScript } from '../lib/lua-script.js';
import { CheckpointStore } from './checkpoint-store.js';

const RESET = luaScript(
  'workspace-reset',
  `-- Removes every Redis record of a workspace, fenced on the generation and the checkpoint list.
-- KEYS[1] generation counter  KEYS[2] address  KEYS[3] runtime  KEYS[4] activity  KEYS[5] persist intent
-- KEYS[6] persist status  KEYS[7] head  KEYS[8] checkpoints zset  KEYS[9] attached zset
-- KEYS[10] checkpoint index  KEYS[11] attach counter  KEYS[12] unattached zset  KEYS[13] migrated hash
-- KEYS[14..] the checkpoint hashes listed in ARGV[3..]
-- ARGV[1] expected generation  ARGV[2] workspaceId  ARGV[3..] checkpoint ids (the whole checkpoints zset)
-- Returns {1} reset | {-1, generation} the generation moved | {-2, count} the checkpoint list changed
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current ~= tonumber(ARGV[1]) then return {-1, current} end
local count = redis.call('ZCARD', KEYS[8])
if count ~= #ARGV - 2 then return {-2, count} end
for i = 3, #ARGV do
  if not redis.call('ZSCORE', KEYS[8], ARGV[i]) then return {-2, count} end
end
local lastSeq = redis.call('HGET', KEYS[6], 'lastSeq')
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11])
if lastSeq then redis.call('HSET', KEYS[6], 'lastSeq', lastSeq) end
redis.call('HDEL', KEYS[13], ARGV[2])
for i = 3, #ARGV do
  redis.call('DEL', KEYS[11 + i])
  redis.call('ZREM', KEYS[12], ARGV[i])
end
return {1}`,
);

export type ResetRecordsResult = { readonly reset: true } | { readonly reset: false; readonly reason: 'generation-moved' | 'checkpoints-changed' };

export class WorkspaceResetStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
  ) {}

  /** The checkpoint ids the reset must remove (read before `removeRecords`). */
  async checkpointIds(workspaceId: string): Promise<string[]> {
    return new CheckpointStore(this.redis, this.keys).ids(workspaceId);
  }

  /** Removes every record of the workspace if its generation is still `generation` and its checkpoints are exactly `checkpointIds`. */
  async removeRecords(workspaceId: string, generation: number, checkpointIds: readonly string[]): Promise<ResetRecordsResult> {
    const k = this.keys;
    const keys = [
      k.generation(workspaceId),
      k.address(workspaceId),
      k.runtime(workspaceId),
      k.activity(workspaceId),
      k.persistIntent(workspaceId),
      k.persistStatus(workspaceId),
      k.head(workspaceId),
      k.checkpoints(workspaceId),
      k.attached(workspaceId),
      k.checkpointIndex(workspaceId),
      k.attachSeq(workspaceId),
      k.unattached(k.bucket(workspaceId)),
      k.migrated(k.bucket(workspaceId)),
      ...checkpointIds.map((id) => k.checkpoint(k.bucket(workspaceId), id)),
    ];
    const reply = (await RESET.run(this.redis, keys, [generation, workspaceId, ...checkpointIds])) as number[];
    if (reply[0] === 1) return { reset: true };
    return { reset: false, reason: reply[0] === -1 ? 'generation-moved' : 'checkpoints-changed' };
  }
}
