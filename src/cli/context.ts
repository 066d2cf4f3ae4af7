/**
 * What every CLI command gets: its I/O, the `--json` flag, and lazily the configuration with
 * the Redis URL resolved (REDIS_URL or the embedded server started by `fleet up` here).
 */
import { CONFIG_VARIABLES, loadConfig, withRedisUrl, type Config } from '../config.js';
import { unknownVariables, unknownVariableWarning } from '../config/unknown-variables.js';
import { resolveRedisUrl } from '../embedded/embedded-redis.js';
import { createLogger, type Logger } from '../logger.js';
import { redisTargetAddress, redisUrlAddress } from '../redis.js';
import type { CliIO } from './output.js';

export interface CliContext {
  readonly io: CliIO;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Parsed configuration (throws ConfigError on a bad variable). */
  config(): Config;
  /** Configuration whose `redis.url` points at a reachable Redis. */
  connectedConfig(): Promise<Config>;
  /** `host:port` of the Redis that `connectedConfig` resolved, else of REDIS_URL (`null` if neither is known). */
  redisAddress(): string | null;
  logger(bindings?: Record<string, unknown>): Logger;
}

export function createCliContext(io: CliIO, env: Readonly<Record<string, string | undefined>> = process.env): CliContext {
  let config: Config | undefined;
  let address: string | null = null;
  const ctx: CliContext = {
    io,
    env,
    config: () => {
      if (config) return config;
      config = loadConfig(env);
      // Once per command, after the configuration parsed: a typo of a variable would leave its default in force unseen.
      for (const unknown of unknownVariables(env, CONFIG_VARIABLES)) io.stderr(`${unknownVariableWarning(unknown)}\n`);
      return config;
    },
    async connectedConfig() {
      const base = ctx.config();
      // A cluster is named by its seed nodes: never an embedded server.
      if (base.redis.clusterNodes !== null) {
        address = redisTargetAddress(base.redis);
        return base;
      }
      const url = await resolveRedisUrl(base.redis.url, base.paths.home);
      address = redisUrlAddress(url);
      return withRedisUrl(base, url);
    },
    redisAddress: () => address ?? (config ? redisTargetAddress(config.redis) : null),
    logger: (bindings = {}) => createLogger({ level: ctx.config().logLevel, format: ctx.config().logFormat, bindings }),
  };
  return ctx;
}
