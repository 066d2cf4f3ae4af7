// Property test of the configuration boundary: 10,000 generated bad environments are refused
// with a ConfigError naming the bad variable, and nothing else (loadConfig never crashes).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, EnvSchema, loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors/config-error.js';
import { fuzzParams, hostileString } from '../helpers/fuzz.js';

type Variable = (typeof CONFIG_VARIABLES)[number];

// True when `value` is a bad value of `variable` on its own.
const isBad = (variable: Variable, value: string) => !EnvSchema.shape[variable].safeParse(value).success;

// Variables that have bad values at all (free-text ones accept any non-blank string).
const CHECKED = CONFIG_VARIABLES.filter((v) => isBad(v, '\0 not a valid value for anything \0'));

// Strings close to valid values: numbers out of range or malformed, near-miss words and URLs.
const nearMiss = fc.oneof(
  fc.constantFrom('-1', '1.5', '1e3', '0x10', ' 5 x', '99999999999999999999', 'NaN', 'Infinity', 'tru', 'yes please', 'redis:/x', 'http://', 'fleet', '{}', 'kind=5', 'idle=999', 'PATH,1BAD', 'short'),
  fc.integer({ min: -1_000_000, max: Number.MAX_SAFE_INTEGER }).map(String),
  fc.double({ noNaN: false }).map(String),
);

const badEnv = fc
  .record({
    bad: fc.uniqueArray(fc.record({ variable: fc.constantFrom(...CHECKED), value: fc.oneof(hostileString, nearMiss) }), { minLength: 1, maxLength: 3, selector: (b) => b.variable }),
    good: fc.constantFrom<Record<string, string>>({}, { FLEET_HOME: '/tmp/x', FLEET_CONCURRENCY: '8' }, { REDIS_URL: 'redis://:pw@127.0.0.1:6379', FLEET_PREFIX: '{t}' }),
  })
  .filter(({ bad }) => bad.every(({ variable, value }) => isBad(variable, value)));

describe('fuzz: configuration environment', () => {
  it('most variables can be bad', () => {
    expect(CHECKED.length).toBeGreaterThan(30);
  });

  it('10,000 bad environments are refused with a ConfigError naming a bad variable', () => {
    fc.assert(
      fc.property(badEnv, ({ bad, good }) => {
        const env: Record<string, string> = { ...good, ...Object.fromEntries(bad.map((b) => [b.variable, b.value])) };
        let caught: unknown;
        try {
          loadConfig(env, '/work');
        } catch (error) {
          caught = error;
        }
        if (!(caught instanceof ConfigError)) throw new Error(`crash or acceptance: ${String((caught as Error)?.stack ?? 'accepted')}`);
        if (!bad.some((b) => b.variable === caught.variable)) throw new Error(`named ${caught.variable}, bad were ${bad.map((b) => b.variable).join(', ')}`);
        if (!caught.message.startsWith(`${caught.variable}: expected `)) throw new Error(`message: ${caught.message}`);
      }),
      fuzzParams(3_000),
    );
  });

  it('free-text variables accept anything without crashing', () => {
    // The admin password is free text with a minimum length (its own property below).
    const free = CONFIG_VARIABLES.filter((v) => !CHECKED.includes(v) && v !== 'FLEET_ADMIN_PASSWORD');
    fc.assert(
      fc.property(fc.constantFrom(...free), hostileString, (variable, value) => {
        loadConfig({ [variable]: value }, '/work');
      }),
      { numRuns: 2_000, seed: 3_001 },
    );
  });

  it('an admin password is accepted from 12 characters on; a shorter one is refused without being shown', () => {
    fc.assert(
      fc.property(hostileString, (value) => {
        let caught: unknown;
        try {
          loadConfig({ FLEET_ADMIN_PASSWORD: value }, '/work');
        } catch (error) {
          caught = error;
        }
        const chars = [...value.trim()].length;
        if (chars >= 12 && caught !== undefined) throw new Error(`refused a ${chars}-character password: ${String(caught)}`);
        if (chars > 0 && chars < 12) {
          if (!(caught instanceof ConfigError) || caught.variable !== 'FLEET_ADMIN_PASSWORD') throw new Error(`accepted a ${chars}-character password`);
          // Exactly the template with the length: nothing of the value itself.
          const expected = `FLEET_ADMIN_PASSWORD: expected a password of at least 12 characters (unset disables the board), got "(redacted, ${chars} characters)"`;
          if (caught.message !== expected || caught.context.value !== `(redacted, ${chars} characters)`) throw new Error(`showed the password: ${caught.message}`);
        }
      }),
      { numRuns: 2_000, seed: 3_002 },
    );
  });
});
