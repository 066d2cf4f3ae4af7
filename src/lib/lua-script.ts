/**
 * A Lua script run with EVALSHA, falling back to EVAL when Redis does not know it yet (after a
 * restart or on a new node). Every multi-key state change of the fleet is one such script.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import { redisErrorCode } from './redis-error-code.js';

export interface LuaScript {
  readonly name: string;
  /** The script's source (for EVAL inside a MULTI, where a NOSCRIPT could not be retried). */
  readonly lua: string;
  run(redis: RedisClient, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

// Redis replies NOSCRIPT when the script cache does not hold the sha; any other failure (OOM,
// READONLY, ...) is the script's own and propagates for the edges to classify.
const isNoScript = (error: unknown) => redisErrorCode(error) === 'NOSCRIPT';

/** Defines a script; `lua` should begin with a header describing KEYS, ARGV and the reply. */
export function luaScript(name: string, lua: string): LuaScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  return {
    name,
    lua,
    async run(redis, keys, args) {
      try {
        return await redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!isNoScript(error)) throw error;
        return redis.eval(lua, keys.length, ...keys, ...args);
      }
    },
  };
}
