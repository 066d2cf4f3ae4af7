/** The field kinds the fleet's variables use, each with the expectation its errors name. */
import { field, type EnvField } from './env-field.js';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** A whole number in [min, max]; a `null` fallback leaves the variable optional. */
export function integer<F extends number | null>(fallback: F, min: number, max: number, unit = ''): EnvField<number | F> {
  const expectation = `a whole number${unit} between ${min} and ${max}`;
  return field<number | F>(expectation, (raw) => (/^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max ? Number(raw) : undefined), fallback);
}

/** A duration in milliseconds in [min, max]. */
export function durationMs<F extends number | null>(fallback: F, min = 1, max = 30 * DAY): EnvField<number | F> {
  return integer(fallback, min, max, ' of milliseconds');
}

/** A percentage in (0, 100], a fraction allowed, a trailing `%` tolerated. */
export function percentage(fallback: number): EnvField<number> {
  return field(
    'a percentage above 0 and at most 100 (e.g. 1 or 0.5)',
    (raw) => (/^\d+(\.\d+)?%?$/.test(raw) && parseFloat(raw) > 0 && parseFloat(raw) <= 100 ? parseFloat(raw) : undefined),
    fallback,
  );
}

/** One of a fixed set of words. */
export function oneOf<const T extends string>(values: readonly T[], fallback: T): EnvField<T> {
  return field(`one of ${values.join(', ')}`, (raw) => ((values as readonly string[]).includes(raw) ? (raw as T) : undefined), fallback);
}

// A Map, not an object literal: `constructor` or `toString` must not read as a value.
const FLAGS = new Map(Object.entries({ true: true, '1': true, yes: true, false: false, '0': false, no: false }));

/** A boolean spelled true/false/1/0/yes/no. */
export function flag(fallback: boolean): EnvField<boolean> {
  return field('true or false', (raw) => FLAGS.get(raw.toLowerCase()), fallback);
}

/** A string matching a pattern; a `null` fallback leaves the variable optional. */
export function matching<F extends string | null>(pattern: RegExp, expectation: string, fallback: F): EnvField<string | F> {
  return field<string | F>(expectation, (raw) => (pattern.test(raw) ? raw : undefined), fallback);
}

/** Any non-blank string (paths, secrets, ids checked by their consumer). */
export function anyText<F extends string | null>(fallback: F): EnvField<string | F> {
  return field<string | F>('a non-empty string', (raw) => raw, fallback);
}

/** A comma-separated list of items each matching a pattern. */
export function list(pattern: RegExp, expectation: string, fallback: readonly string[]): EnvField<readonly string[]> {
  return field<readonly string[]>(
    `a comma-separated list of ${expectation}`,
    (raw) => {
      const items = raw.split(',').map((item) => item.trim()).filter((item) => item !== '');
      return items.every((item) => pattern.test(item)) ? Object.freeze(items) : undefined;
    },
    Object.freeze([...fallback]),
    (items) => items.join(','),
  );
}

/** A comma-separated list of items each matching a pattern; unset is `null`. */
export function listOrNull(pattern: RegExp, expectation: string): EnvField<readonly string[] | null> {
  return field<readonly string[] | null>(
    `a comma-separated list of ${expectation}`,
    (raw) => {
      const items = raw.split(',').map((item) => item.trim()).filter((item) => item !== '');
      return items.length > 0 && items.every((item) => pattern.test(item)) ? Object.freeze(items) : undefined;
    },
    null,
    (items) => (items === null ? '' : items.join(',')),
  );
}
