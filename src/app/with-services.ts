/** Runs a CLI action with the fleet's stores and providers on a fresh client connection. */
import type { Config } from '../config.js';
import { closeRedis, createRedis } from '../redis.js';
import { createServices, type FleetServices } from './services.js';
import type { CliContext } from '../cli/context.js';

export async function withServices<T>(ctx: CliContext, action: (services: FleetServices, config: Config) => Promise<T>): Promise<T> {
  const config = await ctx.connectedConfig();
  const redis = createRedis({ url: config.redis.url!, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'fleet-cli' });
  const services = createServices({ config, redis, logger: ctx.logger({ component: 'cli' }) });
  try {
    return await action(services, config);
  } finally {
    await services.close();
    await closeRedis(redis);
  }
}
