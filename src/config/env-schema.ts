/** The raw environment schema and the variable list, derived from the records of `CONFIG_SHAPE`. */
import { z } from 'zod';
import type { ConfigVariable } from './config-variable.js';
import { variablesOf, type VariablesOf } from './compile-shape.js';
import { CONFIG_SHAPE } from './config-shape.js';

type Variable = VariablesOf<typeof CONFIG_SHAPE>;
type ParsedOf<V> = V extends ConfigVariable<string, infer T, infer _U> ? T : never;

/** The name of a variable the fleet reads. */
export type ConfigVariableName = Variable['name'];

/** Every variable's record, in README order. */
export const CONFIG_RECORDS: readonly Variable[] = Object.freeze(variablesOf(CONFIG_SHAPE) as Variable[]);

/** The names of every variable the fleet reads. */
export const CONFIG_VARIABLES: readonly ConfigVariableName[] = Object.freeze(CONFIG_RECORDS.map((record) => record.name));

type EnvShape = { readonly [V in Variable as V['name']]: z.ZodType<ParsedOf<V>, string | undefined> };

/** The raw environment schema: one entry per variable, in README order. */
export const EnvSchema = z.object(Object.fromEntries(CONFIG_RECORDS.map((record) => [record.name, record.field.schema])) as unknown as EnvShape);

/** Every variable parsed and defaulted. */
export type Env = z.output<typeof EnvSchema>;
