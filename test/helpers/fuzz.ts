// Shared pieces of the property tests (test/unit/fuzz-*.test.ts): run counts, hostile values,
// and the one check every refusal must pass (a typed error, nothing else).
import fc from 'fast-check';
import type { z } from 'zod';
import { encodeFailure } from '../../src/errors/failure-codec.js';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { parsePayload } from '../../src/queues/payload.js';

/** Generated bad inputs per surface. */
export const FUZZ_RUNS = 10_000;

/** fast-check parameters: a fixed seed per surface keeps failures reproducible. */
export const fuzzParams = (seed: number): fc.Parameters<unknown> => ({ numRuns: FUZZ_RUNS, seed, endOnFailure: true });

// Scalars of every JavaScript kind (JSON and not).
const scalar: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.bigInt(),
  fc.boolean(),
  fc.constantFrom(null, undefined, Number.NaN, Infinity, -0, Symbol('s'), () => 1),
  fc.date({ noInvalidDate: false }),
);

/**
 * Any JavaScript value a caller of the TypeScript client could pass, JSON or not: scalars,
 * small arrays (sparse too), plain and null-prototype objects, boxed values, Maps, Sets and
 * typed arrays. (Hand-built instead of `fc.anything()`, which is several times slower.)
 */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: scalar },
  fc.array(scalar, { maxLength: 4 }),
  fc.sparseArray(scalar, { maxLength: 6 }),
  fc.dictionary(fc.string({ maxLength: 6 }), scalar, { maxKeys: 4 }),
  fc.dictionary(fc.string({ maxLength: 6 }), scalar, { maxKeys: 4 }).map((d) => Object.assign(Object.create(null) as object, d)),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.array(scalar, { maxLength: 2 }), { maxKeys: 3 }),
  scalar.map((v) => [new Map([[v, v]]), new Set([v]), Object(typeof v === 'symbol' ? 's' : v) as object]),
  fc.constantFrom(new Uint8Array([1, 2]), new Float64Array(1), new Number(5), new String('x'), new Boolean(false)),
);

/** Strings that break naive validation: control characters, separators, traversal, long runs. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: fc.constantFrom('a', '-', '_', '.', '/', '\\', ' ', '\n', '\0', '\u202e', 'é', '😀', '{', '}', ':', '$'), maxLength: 200 }),
  fc.constantFrom('', ' ', '..', '../etc/passwd', '/abs', 'a'.repeat(129), '__proto__', 'constructor', 'NaN', '-1', '1e309'),
);

// Copy of `object` with `key` removed.
function without(object: Record<string, unknown>, key: string): Record<string, unknown> {
  const copy = { ...object };
  delete copy[key];
  return copy;
}

/**
 * Inputs a schema should refuse, built around one valid example: something that is not the
 * payload at all, one field replaced by a hostile value or string, a required field missing, or
 * an unknown key. A candidate the schema happens to accept is skipped by `expectRefused`
 * (`fc.pre`), so every counted run is a bad input.
 */
export function badInputs(schema: z.ZodType, valid: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(valid);
  const required = keys.filter((key) => !schema.safeParse(without(valid, key)).success);
  const field = fc.constantFrom(...keys);
  return fc.oneof(
    hostileValue,
    fc.record({ key: field, value: hostileValue }).map(({ key, value }) => ({ ...valid, [key]: value })),
    fc.record({ key: field, value: hostileString }).map(({ key, value }) => ({ ...valid, [key]: value })),
    ...(required.length > 0 ? [fc.constantFrom(...required).map((key) => without(valid, key))] : []),
    fc.record({ key: hostileString.filter((k) => !keys.includes(k)), value: hostileValue }).map(({ key, value }) => ({ ...valid, [key]: value })),
  );
}

/**
 * Parses `input`, which must be refused with a `PayloadInvalidError` that names fields and
 * encodes for the wire. An input the schema accepts is not a bad input: the run is skipped.
 */
export function expectRefused(subject: string, schema: z.ZodType, input: unknown): void {
  let caught: unknown;
  try {
    parsePayload(subject, schema, input);
  } catch (error) {
    caught = error;
  }
  fc.pre(caught !== undefined);
  expectPayloadInvalid(caught, () => `${subject} accepted ${safeRender(input)}`);
}

/** Checks that `caught` is a well-formed `PayloadInvalidError` (else throws, failing the property). */
export function expectPayloadInvalid(caught: unknown, whenMissing: string | (() => string)): PayloadInvalidError {
  if (caught === undefined) throw new Error(typeof whenMissing === 'string' ? whenMissing : whenMissing());
  if (!(caught instanceof PayloadInvalidError)) throw new Error(`crash: ${String((caught as Error)?.stack ?? caught)}`);
  if (caught.issues.length === 0 || caught.issues.some((i) => typeof i.field !== 'string' || typeof i.message !== 'string')) {
    throw new Error(`malformed issues: ${caught.message}`);
  }
  if (!encodeFailure(caught).startsWith('PayloadInvalid: ')) throw new Error(`bad wire form: ${encodeFailure(caught)}`);
  return caught;
}

// A printable rendering of any value (for failure messages).
function safeRender(value: unknown): string {
  try {
    return fc.stringify(value).slice(0, 300);
  } catch {
    return String(value);
  }
}
