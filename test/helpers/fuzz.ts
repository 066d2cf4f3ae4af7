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

/** Any JavaScript value a caller of the TypeScript client could pass, JSON or not. */
export const hostileValue: fc.Arbitrary<unknown> = fc.anything({
  maxDepth: 3,
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
  withUnicodeString: true,
});

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
 * Inputs a schema must refuse, built around one valid example: something that is not the
 * payload at all, one field replaced by a hostile value or string, a required field missing, or
 * an unknown key. Only refused candidates are kept, so every generated input is bad.
 */
export function badInputs(schema: z.ZodType, valid: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(valid);
  const field = fc.constantFrom(...keys);
  return fc
    .oneof(
      hostileValue,
      fc.record({ key: field, value: hostileValue }).map(({ key, value }) => ({ ...valid, [key]: value })),
      fc.record({ key: field, value: hostileString }).map(({ key, value }) => ({ ...valid, [key]: value })),
      field.map((key) => without(valid, key)),
      fc.record({ key: hostileString.filter((k) => !keys.includes(k)), value: hostileValue }).map(({ key, value }) => ({ ...valid, [key]: value })),
    )
    .filter((input) => !schema.safeParse(input).success);
}

/** Parses `input`, which must be refused with a `PayloadInvalidError` that names fields and encodes for the wire. */
export function expectRefused(subject: string, schema: z.ZodType, input: unknown): PayloadInvalidError {
  let caught: unknown;
  try {
    parsePayload(subject, schema, input);
  } catch (error) {
    caught = error;
  }
  return expectPayloadInvalid(caught, `${subject} accepted ${safeRender(input)}`);
}

/** Checks that `caught` is a well-formed `PayloadInvalidError` (else throws, failing the property). */
export function expectPayloadInvalid(caught: unknown, whenMissing: string): PayloadInvalidError {
  if (caught === undefined) throw new Error(whenMissing);
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
