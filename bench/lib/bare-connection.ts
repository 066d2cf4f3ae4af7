/**
 * BullMQ connection options for the bare baselines (BullMQ makes its own connections from them,
 * as a plain app would): host, port and the password of the bench's private Redis. Leaving the
 * password out makes ioredis retry NOAUTH forever, which hangs the benchmark.
 */
import type { ConnectionOptions } from 'bullmq';

export function bareConnection(redisUrl: string): ConnectionOptions {
  const url = new URL(redisUrl);
  return { host: url.hostname, port: Number(url.port), ...(url.password ? { password: decodeURIComponent(url.password) } : {}) };
}
