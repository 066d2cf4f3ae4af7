/** Parses the environment once into the frozen, fully-defaulted `Config`. */
import { ConfigError } from '../errors/config-error.js';
import { compileShape, type Compiled } from './compile-shape.js';
import { CONFIG_SHAPE } from './config-shape.js';
import { deepFreeze } from './deep-freeze.js';
import { CONFIG_RECORDS, CONFIG_VARIABLES, EnvSchema } from './env-schema.js';
import { redacted } from './redacted.js';

/** Variables whose values are credentials: an error shows them redacted. */
const SECRET_VARIABLES: ReadonlySet<string> = new Set(CONFIG_RECORDS.filter((record) => record.secret).map((record) => record.name));

/** The compiled configuration. All paths are absolute; all durations are milliseconds. */
export type Config = Compiled<typeof CONFIG_SHAPE>;

/** Limits of one sandboxed command: rlimits always, cgroup v2 limits where the tree is delegable. */
export type SandboxLimitsConfig = Config['sandbox']['limits'];

/**
 * Parses the environment once. Throws `ConfigError` naming the first bad variable.
 * @param env defaults to `process.env`; tests pass their own object.
 * @param cwd directory that relative paths are resolved against.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>> = process.env, cwd = process.cwd()): Config {
  const raw: Record<string, string | undefined> = {};
  for (const name of CONFIG_VARIABLES) raw[name] = env[name];
  const parsed = EnvSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0]);
    const value = raw[variable];
    throw new ConfigError(variable, issue.message, value !== undefined && SECRET_VARIABLES.has(variable) ? redacted(value) : value);
  }
  return deepFreeze(compileShape(CONFIG_SHAPE, { cwd, env, parsed: parsed.data }) as Config);
}

/** A copy of `config` pointing at a resolved Redis URL (embedded mode). */
export function withRedisUrl(config: Config, url: string): Config {
  return deepFreeze<Config>({ ...config, redis: { ...config.redis, url } });
}

/** The configuration with Bull Board's password set (`fleet up`'s generated one). */
export function withAdminPassword(config: Config, password: string): Config {
  return deepFreeze<Config>({ ...config, admin: { ...config.admin, password } });
}
