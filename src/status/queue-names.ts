/**
 * Every BullMQ queue of the fleet that an operator must see: the six for every known host and
 * every remote provider host in use (`persist@vercel`), plus any queue that holds jobs under the
 * fleet's prefix (found by its job-id counter, so a queue nobody registered still shows, e.g.
 * `persist@vercel` when only another process has Vercel configured, or `hostops@<host>`).
 */
import type { RedisClient } from '../redis.js';
import type { Config } from '../config.js';
import type { FleetKeys } from '../keys.js';
import { providerHostsInUse } from '../providers/provider-hosts.js';
import { HOSTOPS } from '../hostops/hostops-queue.js';
import { QUEUE_NAMES, QUEUES, parseQueueName, queueNameFor } from '../queues/index.js';
import { registeredHosts } from '../state/worker-registry.js';
import { scanKeys } from '../state/scan-keys.js';

/** Every BullMQ queue name of the fleet for the given hosts. */
export function allQueueNames(hosts: readonly string[]): string[] {
  return QUEUE_NAMES.flatMap((name) => (QUEUES[name].hostBound ? hosts.map((h) => queueNameFor(name, h)) : [name]));
}

/** Hosts that ever registered (plus this one). */
export async function knownHostIds(redis: RedisClient, keys: FleetKeys, selfHostId: string): Promise<string[]> {
  const hosts = await registeredHosts(redis, keys);
  return [...new Set([selfHostId, ...hosts])].sort();
}

/** Whether a name is one of the fleet's queues (the six, host-bound ones with a host, or hostops@<host>). */
export function isFleetQueueName(name: string): boolean {
  if (parseQueueName(name) !== null) return true;
  const [base, host, ...rest] = name.split('@');
  return base === HOSTOPS && host !== undefined && /^[A-Za-z0-9_-]{1,64}$/.test(host) && rest.length === 0;
}

/**
 * Queues under the prefix that ever had a job (BullMQ's `<prefix>:<queue>:id` counter). On a
 * Redis Cluster every master is scanned: a SCAN reaches one node, and per-queue tags put the
 * queues on all of them.
 */
export async function discoveredQueueNames(redis: RedisClient, keys: FleetKeys): Promise<string[]> {
  const found = new Set<string>();
  await scanKeys(redis, keys.bullQueueIdPattern(), (key) => {
    const name = keys.bullQueueOfIdKey(key);
    if (isFleetQueueName(name)) found.add(name);
  });
  return [...found];
}

/** The queues to show: the standard ones of known and provider hosts, and every queue that holds jobs. */
export async function fleetQueueNames(redis: RedisClient, keys: FleetKeys, config: Config): Promise<string[]> {
  const hosts = [...new Set([...(await knownHostIds(redis, keys, config.hostId)), ...providerHostsInUse(config)])];
  return [...new Set([...allQueueNames(hosts), ...(await discoveredQueueNames(redis, keys))])].sort();
}
