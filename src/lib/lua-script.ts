/**
 * A Lua script run with EVALSHA, falling back to EVAL when Redis does not know it yet (after a
 * restart or on a new node). Every multi-key state change of the fleet is one such script.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface LuaScript {
  readonly name: string;
  run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

// Redis replies NOSCRIPT when the script cache does not hold the sha.
const isNoScript = (error: unknown) => error instanceof Error && error.message.startsWith('NOSCRIPT');

/** Defines a script; `lua` should begin with a header describing KEYS, ARGV and the reply. */
export function luaScript(name: string, lua: string): LuaScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  return {
    name,
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
