// Scripts run through ioredis defineCommand: EVALSHA, and EVAL again after Redis forgot the
// script (SCRIPT FLUSH, as after a restart); two scripts with one name never collide.
import { describe, expect, it } from 'vitest';
import { luaScript } from '../../src/lib/lua-script.js';
import { testConfig, testConnection, uniquePrefix } from '../helpers/fleet-env.js';

describe('luaScript', () => {
  it('runs, survives a script flush, and keeps two same-named scripts apart', async () => {
    const { config } = await testConfig();
    const redis = testConnection(config);
    const key = `${uniquePrefix()}:n`;
    const incr = luaScript('bump', "return redis.call('INCRBY', KEYS[1], ARGV[1])");
    const double = luaScript('bump', "return redis.call('INCRBY', KEYS[1], 2 * tonumber(ARGV[1]))");
    expect(await incr.run(redis, [key], [5])).toBe(5);
    await redis.script('FLUSH');
    expect(await incr.run(redis, [key], [1])).toBe(6);
    expect(await double.run(redis, [key], [2])).toBe(10);
    // A script error is the script's own, not a missing script.
    const broken = luaScript('broken', "return redis.call('INCR', KEYS[1], 'extra', 'args')");
    await expect(broken.run(redis, [key], [])).rejects.toThrow(/wrong number of arg/i);
    expect(await redis.get(key)).toBe('10');
  });
});
