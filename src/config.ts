/**
 * The fleet's configuration: every environment variable is read here and nowhere else, parsed
 * once by one zod schema into a frozen, fully-defaulted `Config` with durations in milliseconds.
 *
 * Each variable is one record in `config/config-shape.ts`, at the `Config` field it sets; the
 * schema, `Config`, the README table and `fleet env` derive from the records. A bad value fails
 * start-up with one line naming the variable, the expectation and the value (see `ConfigError`).
 */
export { loadConfig, withAdminPassword, withRedisUrl, type Config, type SandboxLimitsConfig } from './config/load-config.js';
export { CONFIG_VARIABLES, EnvSchema, type ConfigVariableName } from './config/env-schema.js';
export { CONFIG_DOCS } from './config/config-docs.js';
export { GC_SCHEDULE_DEFAULTS } from './config/gc-schedule.js';
export type { UidRange } from './config/uid-range.js';
