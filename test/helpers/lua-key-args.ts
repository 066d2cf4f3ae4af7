/**
 * Finds the keys a Lua script reaches without receiving them in KEYS (Redis Cluster routes a
 * script by its declared keys; a key built inside the script may live on another node). Reads
 * source text: every `redis.call` / `redis.pcall` must name its keys as `KEYS[...]`, or as a
 * parameter of a `local function` that every call site passes a `KEYS[...]`.
 */

// Commands that take no key, and commands whose every argument is a key; any other command used
// by a script must be listed in SINGLE_KEY (its first argument is its only key).
const KEYLESS = new Set(['TIME']);
const ALL_KEYS = new Set(['DEL', 'UNLINK', 'EXISTS', 'TOUCH', 'MGET']);
const SINGLE_KEY = new Set([
  'GET', 'SET', 'INCR', 'INCRBY', 'DECR', 'PEXPIRE', 'EXPIRE', 'PTTL', 'TTL',
  'HGET', 'HSET', 'HMGET', 'HDEL', 'HGETALL', 'HVALS', 'HKEYS', 'HLEN', 'HEXISTS', 'HINCRBY', 'HSETNX',
  'ZADD', 'ZREM', 'ZRANGE', 'ZREVRANGE', 'ZRANGEBYSCORE', 'ZREVRANGEBYSCORE', 'ZREMRANGEBYSCORE', 'ZSCORE', 'ZCARD', 'ZCOUNT',
  'SADD', 'SREM', 'SCARD', 'SISMEMBER', 'SMEMBERS',
]);

export interface KeyViolation {
  readonly call: string;
  readonly why: string;
}

// Splits `a, f(b, c), 'x,y'` at its top-level commas; returns the arguments and where the list ends.
function splitArgs(text: string, start: number): { args: string[]; end: number } {
  const args: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let current = '';
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      current += c;
      if (c === '\\') current += text[++i] ?? '';
      else if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) {
        if (current.trim()) args.push(current.trim());
        return { args, end: i };
      }
      depth--;
    } else if (c === ',' && depth === 0) {
      args.push(current.trim());
      current = '';
      continue;
    }
    current += c;
  }
  throw new Error(`unbalanced call at ${start}`);
}

const isKeysRef = (arg: string) => /^KEYS\[[^\]]+\]$/.test(arg);

// The parameters of local functions that only ever receive KEYS[...] at their position.
function keyParameters(source: string): Set<string> {
  const params = new Set<string>();
  for (const m of source.matchAll(/local\s+function\s+([A-Za-z_]\w*)\s*\(([^)]*)\)/g)) {
    const [, name, list] = m;
    const names = list!.split(',').map((p) => p.trim());
    const calls = [...source.matchAll(new RegExp(`(?<!function\\s+)\\b${name}\\s*\\(`, 'g'))].map((c) => splitArgs(source, c.index + c[0].length).args);
    names.forEach((param, i) => {
      if (calls.length > 0 && calls.every((args) => isKeysRef(args[i] ?? ''))) params.add(param);
    });
  }
  return params;
}

/** Every `redis.call` in `source` that touches a key not given in KEYS. */
export function keyViolations(source: string): KeyViolation[] {
  const fromKeys = keyParameters(source);
  const violations: KeyViolation[] = [];
  for (const m of source.matchAll(/redis\.p?call\s*\(/g)) {
    const { args, end } = splitArgs(source, m.index + m[0].length);
    const call = source.slice(m.index, end + 1);
    const command = /^['"](\w+)['"]$/.exec(args[0] ?? '')?.[1]?.toUpperCase();
    if (!command) {
      violations.push({ call, why: 'the command is not a string literal' });
      continue;
    }
    if (KEYLESS.has(command)) continue;
    const keyArgs = ALL_KEYS.has(command) ? args.slice(1) : SINGLE_KEY.has(command) ? args.slice(1, 2) : null;
    if (!keyArgs) {
      violations.push({ call, why: `${command} is not classified (add it to the key tables of test/helpers/lua-key-args.ts)` });
      continue;
    }
    for (const arg of keyArgs) {
      if (!isKeysRef(arg) && !fromKeys.has(arg)) violations.push({ call, why: `key ${arg} is not one of KEYS` });
    }
  }
  return violations;
}
