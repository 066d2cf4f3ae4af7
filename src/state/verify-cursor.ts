/**
 * Where the next `--read-data-subset` slice of the object id space starts (see
 * archive/id-window.ts). In Redis, not a file: verify runs from any host (the CLI, or the
 * scheduled `verify` GC kind on whichever worker takes the job) against one shared archive, so
 * the rotation must be fleet-wide; the archive is never written by a check (it may be mounted
 * read-only where verify runs), and FLEET_HOME is one host's. Claiming a slice is one atomic
 * step, so two runs at once read consecutive slices, not the same one. Losing the cursor (a
 * failover) only restarts the rotation.
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import { luaScript } from '../lib/lua-script.js';
import { ID_SPACE, type IdWindow } from '../archive/id-window.js';

const CLAIM = luaScript(
  'verify-cursor-claim',
  `-- Claims the next slice of the object id space and moves the cursor past it (wrapping).
-- KEYS[1] cursor
-- ARGV: width, space
-- Returns the slice's start
local space = tonumber(ARGV[2])
local start = tonumber(redis.call('GET', KEYS[1]) or '0')
if start == nil or start < 0 or start >= space or start % 1 ~= 0 then start = 0 end
redis.call('SET', KEYS[1], string.format('%d', (start + tonumber(ARGV[1])) % space))
return start`,
);

export class VerifyCursor {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
  ) {}

  /** The next window of `width` values; later claims continue after it. */
  async claim(width: number): Promise<IdWindow> {
    const start = Number(await CLAIM.run(this.redis, [this.keys.verifyCursor()], [Math.round(width), ID_SPACE]));
    return { start, width: Math.round(width) };
  }
}
