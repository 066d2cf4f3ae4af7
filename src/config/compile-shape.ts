/**
 * Walks a shape of config records: a nested object whose leaves are variable records or derived
 * values. The compiled object has the shape's keys in the shape's order, each leaf compiled.
 */
import { ConfigVariable, DerivedValue, type CompileContext } from './config-variable.js';

// `any` in the records' value positions: a `Compile` is contravariant in its input, so no other
// type would admit every record.
type AnyVariable = ConfigVariable<string, any, any>;

export interface Shape {
  readonly [key: string]: AnyVariable | DerivedValue<unknown> | Shape;
}

/** The object a shape compiles to. */
export type Compiled<S> =
  S extends ConfigVariable<string, infer _T, infer U> ? U : S extends DerivedValue<infer U> ? U : { readonly [K in keyof S]: Compiled<S[K]> };

/** The variable records of a shape (a union of their types). */
export type VariablesOf<S> = S extends AnyVariable ? S : S extends DerivedValue<unknown> ? never : { [K in keyof S]: VariablesOf<S[K]> }[keyof S];

/** The compiled object of `shape`; `ctx.parsed` holds every variable's parsed value. */
export function compileShape(shape: Shape, ctx: CompileContext): unknown {
  const parsed = ctx.parsed as Readonly<Record<string, unknown>>;
  return Object.fromEntries(
    Object.entries(shape).map(([key, node]) => {
      if (node instanceof ConfigVariable) return [key, node.compile(parsed[node.name], ctx)];
      if (node instanceof DerivedValue) return [key, node.compute(ctx)];
      return [key, compileShape(node, ctx)];
    }),
  );
}

/** Every variable record of `shape`, depth first in declaration order. */
export function variablesOf(shape: Shape): AnyVariable[] {
  return Object.values(shape).flatMap((node) => (node instanceof ConfigVariable ? [node] : node instanceof DerivedValue ? [] : variablesOf(node)));
}
