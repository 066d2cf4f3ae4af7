/**
 * A Lua script, run through ioredis's own script support (`defineCommand`): EVALSHA, and EVAL
 * when Redis does not know the script yet (after a restart or on a new node). Every multi-key
 * state change of the fleet is one such script. The command is defined once per connection (a
 * single server or a Cluster alike), named after the script's hash, so two scripts never share
 * a name. A command Redis does not answer in time fails as a `RedisCommandTimeoutError`, as any
 * other (lib/redis-command-timeout.ts).
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis.js';

export interface LuaScript {
  readonly name: string;
  /** The script's source (for EVAL inside a MULTI, where a NOSCRIPT could not be retried). */
  readonly lua: string;
  run(redis: RedisClient, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

type ScriptCommand = (numberOfKeys: number, ...keysAndArgs: (string | number)[]) => Promise<unknown>;

/** Defines a script; `lua` should begin with a header describing KEYS, ARGV and the reply. */
export function luaScript(name: string, lua: string): LuaScript {
  const command = `fleetScript_${createHash('sha1').update(lua).digest('hex')}`;
  return {
    name,
    lua,
    run(redis, keys, args) {
      // No `numberOfKeys` in the definition: each call passes it first, as EVAL takes it.
      if (!(command in redis)) redis.defineCommand(command, { lua });
      return (redis as unknown as Record<string, ScriptCommand>)[command]!.call(redis, keys.length, ...keys, ...args);
    },
  };
}
