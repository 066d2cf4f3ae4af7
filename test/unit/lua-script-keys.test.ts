// Every Lua script of the fleet names each key it touches in KEYS (Redis Cluster needs it: a key
// built inside a script may hash to another node, and EVAL routes by the declared keys only).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyViolations } from '../helpers/lua-key-args.js';

const SRC = path.resolve(import.meta.dirname, '../../src');

// The source files under src/ that define a Lua script.
async function scriptFiles(): Promise<string[]> {
  const entries = await readdir(SRC, { recursive: true });
  const files: string[] = [];
  for (const entry of entries) {
    if (!entry.endsWith('.ts') || entry === path.join('lib', 'lua-script.ts')) continue;
    if ((await readFile(path.join(SRC, entry), 'utf8')).includes('luaScript(')) files.push(entry);
  }
  return files.sort();
}

describe('Lua script keys', () => {
  it('finds the scripts (a scan that finds none would pass vacuously)', async () => {
    const files = await scriptFiles();
    expect(files).toContain(path.join('state', 'checkpoint-store.ts'));
    expect(files.length).toBeGreaterThanOrEqual(8);
  });

  it('every redis.call in a script under src/ names its keys as KEYS', async () => {
    const found: string[] = [];
    for (const file of await scriptFiles()) {
      for (const v of keyViolations(await readFile(path.join(SRC, file), 'utf8'))) found.push(`${file}: ${v.why}: ${v.call}`);
    }
    expect(found).toEqual([]);
  });

  it('flags a key built inside the script', () => {
    const lua = `for _, id in ipairs(ids) do redis.call('DEL', KEYS[1], ARGV[3] .. ':ckpt:' .. id) end`;
    expect(keyViolations(lua).map((v) => v.why)).toEqual([`key ARGV[3] .. ':ckpt:' .. id is not one of KEYS`]);
  });

  it('flags a local alias and a helper parameter that is not always a KEYS entry', () => {
    const lua = [
      `local key = ARGV[1]`,
      `redis.call('GET', key)`,
      `local function bump(h) redis.call('HINCRBY', h, 'n', 1) end`,
      `bump(KEYS[1])`,
      `bump(ARGV[2])`,
    ].join('\n');
    expect(keyViolations(lua).map((v) => v.why)).toEqual(['key key is not one of KEYS', 'key h is not one of KEYS']);
  });

  it('accepts KEYS entries, computed indexes and helper parameters bound to KEYS', () => {
    const lua = [
      `local function clear(intentKey, n) redis.call('HDEL', intentKey, 'seq') end`,
      `clear(KEYS[1], 2)`,
      `for i = 4, #KEYS do redis.call('HGET', KEYS[i], 'status') end`,
      `redis.call('DEL', KEYS[2], KEYS[k + 1])`,
      `local t = redis.call('TIME')`,
    ].join('\n');
    expect(keyViolations(lua)).toEqual([]);
  });

  it('flags a command it does not know how to read', () => {
    expect(keyViolations(`redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[2], 'x')`).map((v) => v.why)).toEqual([
      'ZUNIONSTORE is not classified (add it to the key tables of test/helpers/lua-key-args.ts)',
    ]);
  });
});
