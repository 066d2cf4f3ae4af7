/**
 * The Lua scripts of the base registry (base-registry.ts). Each multi-key change is one script
 * that checks, in the same step, the state it read before (the lane's active base, an entry's
 * status), and declares every key it touches; a caller whose precondition moved reads again.
 *
 * Entry hash fields used here: `status`, `active` ('1'/'0'), `previousSnapshotId`, `createdAt`,
 * `error`, `retiredAt`, `retiringAt`, `readyAt`, `testedAt`, `rotatedAt`.
 */
import { luaScript } from '../lib/lua-script.js';

export const ACTIVATE = luaScript(
  'base-activate',
  `-- Makes a ready base the active one of its provider+lane; the previous active becomes its rollback
-- target, and the previous active's own rollback target is protected no more: its retention starts now.
-- KEYS[1] active-bases hash  KEYS[2] new entry hash  KEYS[3] the expected previous active entry's hash
-- (only when ARGV[3] is not '')  KEYS[4] the entry that was its rollback target (only when ARGV[5] is not '')
-- ARGV: laneField, snapshotId, expected previous active id ('' = none), force ('1': a candidate, untested,
-- may be activated), the previous active's expected rollback target ('' = none), now (ms)
-- Returns {1, previous|''} activated | {-1} entry not ready | {-2, actual|''} the lane's active base moved
local status = redis.call('HGET', KEYS[2], 'status')
if status ~= 'ready' and not (status == 'candidate' and ARGV[4] == '1') then return {-1} end
local previous = redis.call('HGET', KEYS[1], ARGV[1]) or ''
-- The previous entry's key came from the caller's read: it is KEYS[3] only while the lane still names that entry.
if previous ~= ARGV[3] then return {-2, previous} end
if previous == ARGV[2] then return {1, previous} end
if previous ~= '' then
  -- Likewise its rollback target: KEYS[4] only while the previous active still names it.
  if (redis.call('HGET', KEYS[3], 'previousSnapshotId') or '') ~= ARGV[5] then return {-2, previous} end
  redis.call('HSET', KEYS[3], 'active', '0')
  if ARGV[5] ~= '' and ARGV[5] ~= ARGV[2] then redis.call('HSET', KEYS[4], 'rotatedAt', ARGV[6]) end
end
redis.call('HSET', KEYS[2], 'active', '1', 'previousSnapshotId', previous)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return {1, previous}`,
);

export const ROLLBACK = luaScript(
  'base-rollback',
  `-- Re-activates the rollback candidate of a lane's active base; the base rolled back from becomes the candidate.
-- KEYS[1] active-bases hash  KEYS[2] current active entry hash  KEYS[3] target (candidate) entry hash
-- ARGV: laneField, currentId, targetId
-- Returns {1} rolled back | {-1} target not ready | {-2, actual|''} the lane's active base or its candidate moved
if (redis.call('HGET', KEYS[1], ARGV[1]) or '') ~= ARGV[2] then return {-2, redis.call('HGET', KEYS[1], ARGV[1]) or ''} end
if (redis.call('HGET', KEYS[2], 'previousSnapshotId') or '') ~= ARGV[3] then return {-2, ARGV[2]} end
if redis.call('HGET', KEYS[3], 'status') ~= 'ready' then return {-1} end
redis.call('HSET', KEYS[2], 'active', '0')
redis.call('HSET', KEYS[3], 'active', '1', 'previousSnapshotId', ARGV[2])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return {1}`,
);

export const MARK_GONE = luaScript(
  'base-mark-gone',
  `-- Records that a ready base's provider snapshot can no longer seed sandboxes (expired or deleted).
-- KEYS[1] entry hash   ARGV: why, now
-- Returns 1 when marked, 0 when the entry is not ready (nothing written).
if redis.call('HGET', KEYS[1], 'status') ~= 'ready' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'gone', 'error', ARGV[1], 'retiredAt', ARGV[2])
return 1`,
);

export const PROMOTE = luaScript(
  'base-promote',
  `-- Records a candidate base as tested: ready, and the one found by its manifest hash from now on.
-- KEYS[1] entry hash  KEYS[2] the provider's by-manifest-hash key
-- ARGV: snapshotId, now (ms)
-- Returns 1 when promoted, 0 when the entry was not a candidate (nothing written).
if redis.call('HGET', KEYS[1], 'status') ~= 'candidate' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'ready', 'readyAt', ARGV[2], 'testedAt', ARGV[2])
redis.call('SET', KEYS[2], ARGV[1])
return 1`,
);

export const FAIL_CANDIDATE = luaScript(
  'base-fail-candidate',
  `-- Records that a candidate base failed its test in a sandbox made from it: never activatable.
-- KEYS[1] entry hash   ARGV: error, now (ms)
-- Returns 1 when marked, 0 when the entry was not a candidate (nothing written).
if redis.call('HGET', KEYS[1], 'status') ~= 'candidate' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'failed', 'error', ARGV[1], 'testedAt', ARGV[2])
return 1`,
);

export const RETIRE_BEGIN = luaScript(
  'base-retire-begin',
  `-- Claims a base for retirement: not active, not the rollback candidate of an active base, no
-- workspace referencing it, unprotected long enough (since it was created, or since it stopped
-- being active or a rollback target: rotatedAt). A retiring base can no longer be activated.
-- KEYS[1] active-bases hash  KEYS[2] entry hash  KEYS[3] its references set  KEYS[4..] the active entries' hashes
-- ARGV: snapshotId, unprotectedBefore (ms), now (ms), then the active base ids the caller read (as KEYS[4..])
-- Returns {1} claimed | {0, why} refused | {-2} the active bases changed (read again)
local active = redis.call('HVALS', KEYS[1])
if #active ~= #ARGV - 3 then return {-2} end
local listed = {}
for i = 4, #ARGV do listed[ARGV[i]] = true end
for _, id in ipairs(active) do if not listed[id] then return {-2} end end
local status = redis.call('HGET', KEYS[2], 'status')
if status ~= 'ready' and status ~= 'candidate' and status ~= 'failed' and status ~= 'gone' and status ~= 'retiring' then return {0, 'status ' .. tostring(status)} end
if listed[ARGV[1]] or redis.call('HGET', KEYS[2], 'active') == '1' then return {0, 'active'} end
for i = 4, #KEYS do
  if redis.call('HGET', KEYS[i], 'previousSnapshotId') == ARGV[1] then return {0, 'rollback candidate'} end
end
if redis.call('SCARD', KEYS[3]) > 0 then return {0, 'referenced'} end
local since = math.max(tonumber(redis.call('HGET', KEYS[2], 'createdAt') or '0') or 0, tonumber(redis.call('HGET', KEYS[2], 'rotatedAt') or '0') or 0)
if since > tonumber(ARGV[2]) then return {0, 'too young'} end
redis.call('HSET', KEYS[2], 'status', 'retiring', 'retiringAt', ARGV[3])
return {1}`,
);

export const RETIRE_FINISH = luaScript(
  'base-retire-finish',
  `-- Records a retiring base as retired once its provider snapshot is deleted.
-- KEYS[1] entry hash   ARGV: now (ms)
-- Returns 1 when retired, 0 when the entry was not retiring.
if redis.call('HGET', KEYS[1], 'status') ~= 'retiring' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'retired', 'retiredAt', ARGV[1])
return 1`,
);
