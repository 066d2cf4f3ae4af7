/**
 * The Lua scripts of the persist intent store (see persist-intent.ts). Each one is a single
 * atomic step over the keys it declares.
 *
 * Intent hash fields: `seq` (newest merged request), `delete`/`deleteSeq`, `force`,
 * `keep`/`keepSeq` (an upload-only request other than a checkpoint's), `reason`,
 * `turnId`, `generation`, and one `r:<requestId>` → seq per pending request of the fleet's
 * client. Status hash fields: `lastSeq` (never reset), `completedSeq`, `completedAt`, `capturedAt`, `result`,
 * `failedSeq`, `failedReason`, and `c:<generation>` → the newest seq a run of that generation covered. A claim key (`persist-claim:<queue>:<jobId>`) holds the seq a
 * worker merged for a job whose producer did not merge it.
 */
import { luaScript } from '../lib/lua-script.js';

// Merges one request. The first write is HINCRBY (a command Redis refuses under OOM), so a
// refused merge writes nothing, like the job add it shares a transaction with (see add-persist-job).
const MERGE_REQUEST = `
local function mergeRequest(intentKey, statusKey, del, force, reason, turnId, generation)
  local seq = redis.call('HINCRBY', statusKey, 'lastSeq', 1)
  redis.call('HSET', intentKey, 'seq', seq)
  if del == '1' then redis.call('HSET', intentKey, 'delete', 1, 'deleteSeq', seq) end
  if force == '1' then redis.call('HSET', intentKey, 'force', 1) end
  -- An upload-only request of anyone but a checkpoint pins keep-missing until a run covers it.
  if del ~= '1' and reason ~= 'checkpoint' then redis.call('HSET', intentKey, 'keep', 1, 'keepSeq', seq) end
  redis.call('HSET', intentKey, 'reason', reason, 'turnId', turnId)
  local gen = tonumber(redis.call('HGET', intentKey, 'generation') or '0')
  if tonumber(generation) > gen then redis.call('HSET', intentKey, 'generation', generation) end
  return seq
end
`;

// Clears what a run covered from an intent that still has newer requests: the delete/force
// flags if no newer delete is pending, the keep flag if no newer upload-only request is, and the
// request records up to the covered seq.
const CLEAR_COVERED = `
local function clearCovered(intentKey, covered)
  local deleteSeq = tonumber(redis.call('HGET', intentKey, 'deleteSeq') or '0')
  if deleteSeq <= covered then redis.call('HSET', intentKey, 'delete', 0, 'deleteSeq', 0, 'force', 0) end
  local keepSeq = tonumber(redis.call('HGET', intentKey, 'keepSeq') or '0')
  if keepSeq <= covered then redis.call('HSET', intentKey, 'keep', 0, 'keepSeq', 0) end
  local fields = redis.call('HGETALL', intentKey)
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 2) == 'r:' and tonumber(fields[i + 1]) <= covered then redis.call('HDEL', intentKey, fields[i]) end
  end
end
`;

export const MERGE = luaScript(
  'persist-intent-merge',
  `-- Merges one request of the fleet's client into the workspace's pending intent, once per request id.
-- KEYS[1] intent hash   KEYS[2] status hash (holds the never-reset request counter)
-- ARGV: delete(0|1), force(0|1), reason, turnId ('' = none), generation, requestId
-- Returns the request's sequence number (strictly increasing per workspace); a request id merged
-- before returns its first sequence number and changes nothing.
${MERGE_REQUEST}
local field = 'r:' .. ARGV[6]
local known = redis.call('HGET', KEYS[1], field)
if known then return tonumber(known) end
local seq = mergeRequest(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
redis.call('HSET', KEYS[1], field, seq)
return seq`,
);

export const CLAIM = luaScript(
  'persist-intent-claim',
  `-- Merges the request of a job that its producer did not merge (any producer but the fleet's
-- client), once per job: a job that runs again (retry, stall) gets its first sequence number.
-- KEYS[1] intent hash   KEYS[2] status hash   KEYS[3] claim key of the job
-- ARGV: delete(0|1), force(0|1), reason, turnId ('' = none), generation, claimTtlMs
-- Returns { seq, 1 if merged now / 0 if the job had claimed before }.
${MERGE_REQUEST}
local known = redis.call('GET', KEYS[3])
if known then return { tonumber(known), 0 } end
local seq = mergeRequest(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
redis.call('SET', KEYS[3], seq, 'PX', ARGV[6])
return { seq, 1 }`,
);

export const COMPLETE = luaScript(
  'persist-intent-complete',
  `-- Clears what a finished run covered, records its outcome for waiters, drops the job's claim.
-- KEYS[1] intent hash   KEYS[2] status hash   KEYS[3] claim key of the finishing job
-- ARGV: coveredSeq, resultJson, capturedAt (ms when the run began reading the live tree; 0 unknown),
--       generation of the run ('' unknown)
-- Returns 1 if the intent was fully covered (deleted), 0 if newer requests remain.
${CLEAR_COVERED}
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
local covered = tonumber(ARGV[1])
local t = redis.call('TIME')
local done = tonumber(redis.call('HGET', KEYS[2], 'completedSeq') or '0')
-- A late run covering less (a re-run of an old job) never moves waiters' progress backwards.
if covered > done then redis.call('HSET', KEYS[2], 'completedSeq', covered) end
-- What runs of each generation covered: a request of a replaced incarnation that a run of a newer
-- one covered was not persisted (its tree is gone); its waiter is told so. The 16 newest are kept.
local gen = tonumber(ARGV[4] or '')
if gen then
  local field = 'c:' .. gen
  if covered > tonumber(redis.call('HGET', KEYS[2], field) or '0') then redis.call('HSET', KEYS[2], field, covered) end
  local fields = redis.call('HKEYS', KEYS[2])
  for i = 1, #fields do
    local g = string.sub(fields[i], 1, 2) == 'c:' and tonumber(string.sub(fields[i], 3))
    if g and g < gen - 16 then redis.call('HDEL', KEYS[2], fields[i]) end
  end
end
redis.call('HSET', KEYS[2], 'result', ARGV[2], 'completedAt', t[1] * 1000 + math.floor(t[2] / 1000))
local captured = tonumber(ARGV[3] or '0') or 0
if captured > tonumber(redis.call('HGET', KEYS[2], 'capturedAt') or '0') then redis.call('HSET', KEYS[2], 'capturedAt', captured) end
redis.call('DEL', KEYS[3])
if seq <= covered then
  redis.call('DEL', KEYS[1])
  return 1
end
clearCovered(KEYS[1], covered)
return 0`,
);

export const FAIL = luaScript(
  'persist-intent-fail',
  `-- Records a final failure of the run that attempted requests up to ARGV[1] and drops the job's
-- claim. With ARGV[3] = 1 the failure is permanent and consumes those requests (like a
-- completion would); otherwise the intent stays for the next run.
-- KEYS[1] intent hash   KEYS[2] status hash   KEYS[3] claim key of the failed job
-- ARGV: attemptedSeq, failedReason, consume(0|1)
${CLEAR_COVERED}
local attempted = tonumber(ARGV[1])
local failed = tonumber(redis.call('HGET', KEYS[2], 'failedSeq') or '0')
if attempted >= failed then redis.call('HSET', KEYS[2], 'failedSeq', attempted, 'failedReason', ARGV[2]) end
redis.call('DEL', KEYS[3])
if ARGV[3] == '1' then
  local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
  if seq <= attempted then
    redis.call('DEL', KEYS[1])
  else
    clearCovered(KEYS[1], attempted)
  end
end
return 1`,
);
