/** Runs a CLI action with the fleet's stores and providers on a fresh client connection. */
import type { Config } from '../config.js';
import { closeRedis, createRedis } from '../redis.js';
import { createServices, type FleetServices } from './services.js';
import { pick } from './pick.js';
import type { Logger } from '../logger.js';

/** What a CLI action's services are built from (the CLI's context). */
export interface ServicesSource {
  /** Configuration whose `redis.url` points at a reachable Redis. */
  connectedConfig(): Promise<Config>;
  logger(bindings?: Record<string, unknown>): Logger;
}

/**
 * The action receives only the members it names (`keys`): a command says what it uses, and the
 * object it holds has nothing else.
 */
export async function withServices<K extends keyof FleetServices, T>(ctx: ServicesSource, keys: readonly K[], action: (services: Pick<FleetServices, K>, config: Config) => Promise<T>): Promise<T> {
  const config = await ctx.connectedConfig();
  const redis = createRedis({ target: config.redis, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'fleet-cli' });
  const services = createServices({ config, redis, logger: ctx.logger({ component: 'cli' }) });
  try {
    return await action(pick(services, ...keys), config);
  } finally {
    await services.close();
    await closeRedis(redis);
  }
}
