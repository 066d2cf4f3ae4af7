/**
 * One environment variable's parser: a zod schema from the raw string (or unset) to a value, the
 * default an unset or blank variable takes, and that default spelled as an operator would write it.
 */
import { z } from 'zod';

export interface EnvField<T> {
  /** Raw string or unset → value; a bad value is one issue whose message is the expectation. */
  readonly schema: z.ZodType<T, string | undefined>;
  /** The value of an unset or blank variable. */
  readonly fallback: T;
  /** `fallback` as the variable's text (README, `fleet env`); `null` when it has none (unset, empty list). */
  readonly fallbackText: string | null;
}

/**
 * A field from a parse that returns `undefined` for a bad value, reported as `expectation`.
 * @param render spells a value as the variable's text; the documented default comes from it.
 */
export function field<T>(expectation: string, parse: (raw: string) => T | undefined, fallback: T, render: (value: T) => string = String): EnvField<T> {
  const schema = z
    .string()
    .optional()
    .transform((raw, ctx): T => {
      if (raw === undefined || raw.trim() === '') return fallback;
      const value = parse(raw.trim());
      if (value === undefined) {
        ctx.addIssue({ code: 'custom', message: expectation });
        return z.NEVER;
      }
      return value;
    });
  const text = fallback === null ? null : render(fallback);
  return Object.freeze({ schema, fallback, fallbackText: text === '' ? null : text });
}
