/**
 * A fleet client configured from the environment as the CLI is: the Redis Cluster of
 * FLEET_REDIS_CLUSTER_NODES, or REDIS_URL when set, else the
 * embedded Redis a `fleet up` in the same FLEET_HOME started (what an app next to a development
 * fleet wants: `const fleet = await connectFleetClient()`).
 */
import { loadConfig } from '../config.js';
import { resolveRedisUrl } from '../embedded/embedded-redis.js';
import { createFleetClient, type FleetClient } from './fleet-client.js';

export async function connectFleetClient(env: Readonly<Record<string, string | undefined>> = process.env): Promise<FleetClient> {
  const config = loadConfig(env);
  if (config.redis.clusterNodes !== null) return createFleetClient({ config });
  const url = await resolveRedisUrl(config.redis.url, config.paths.home);
  return createFleetClient({ config: { ...config, redis: { ...config.redis, url } } });
}
