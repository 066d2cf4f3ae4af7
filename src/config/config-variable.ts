/**
 * The record of one environment variable: its name, its parser (with the default), its
 * documentation and how its value becomes the `Config` field it sits at. The records sit at
 * their fields in `CONFIG_SHAPE`; everything else (the env schema, the compiled `Config`, the
 * README table, `fleet env`) is derived from them.
 */
import type { EnvField } from './env-field.js';
import type { Env } from './env-schema.js';

/** What a compile step may read besides its own value. */
export interface CompileContext {
  /** Directory relative paths are resolved against. */
  readonly cwd: string;
  /** The raw environment, for what is not a fleet variable (PATH, the exec allowlist's values). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Every variable parsed and defaulted. A step reading it declares its return type (the type is derived from the records). */
  readonly parsed: Env;
}

/** `T` (parsed) → `U` (the Config field); may throw `ConfigError` for a rule spanning variables. */
export type Compile<T, U> = (value: T, ctx: CompileContext) => U;

/** The documentation of a variable. A `null` default has no spelling, so it must be described. */
export type VariableDocs<T> = (null extends T ? { readonly default: string; readonly doc: string } : { readonly default?: string; readonly doc: string }) & {
  /** The value is a credential (or holds one): never printed, logged or carried in an error (`redacted`). */
  readonly secret?: boolean;
};

export class ConfigVariable<N extends string, T, U> {
  /** The default as the README and `fleet env` show it. */
  readonly defaultText: string;
  /** What the variable means (one README cell: markdown, no `|`). */
  readonly doc: string;
  /** The value is a credential: an error shows it `redacted`. */
  readonly secret: boolean;

  constructor(
    readonly name: N,
    readonly field: EnvField<T>,
    docs: VariableDocs<T>,
    readonly compile: Compile<T, U>,
  ) {
    const text = docs.default ?? field.fallbackText;
    // A programming error in the records: caught by any test that imports the config.
    if (text === null || docs.doc === '') throw new Error(`${name}: a config record needs a default text and a doc`);
    this.defaultText = text;
    this.doc = docs.doc;
    this.secret = docs.secret === true;
    Object.freeze(this);
  }
}

/** A `Config` field computed from the environment, not set by a variable of its own. */
export class DerivedValue<U> {
  constructor(readonly compute: (ctx: CompileContext) => U) {
    Object.freeze(this);
  }
}

/** The record of a variable whose value lands in its field as parsed. */
export function variable<const N extends string, T>(name: N, field: EnvField<T>, docs: VariableDocs<T>): ConfigVariable<N, T, T>;
/** The record of a variable whose value `compile` turns into its field. */
export function variable<const N extends string, T, U>(name: N, field: EnvField<T>, docs: VariableDocs<T>, compile: Compile<T, U>): ConfigVariable<N, T, U>;
export function variable<const N extends string, T, U>(name: N, field: EnvField<T>, docs: VariableDocs<T>, compile?: Compile<T, U>): ConfigVariable<N, T, U | T> {
  return new ConfigVariable<N, T, U | T>(name, field, docs, compile ?? ((value) => value));
}

/** A field computed from the environment (PATH, a filtered copy of it). */
export function derived<U>(compute: (ctx: CompileContext) => U): DerivedValue<U> {
  return new DerivedValue(compute);
}

/** A field no variable sets. */
export function fixed<U>(value: U): DerivedValue<U> {
  return new DerivedValue(() => value);
}
