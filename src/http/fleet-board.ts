/**
 * Bull Board (9.x, every `@bull-board/*` pinned to one exact version) over every fleet queue,
 * including the host-bound `persist@<host>` and `checkpoint@<host>` queues: the list is refreshed
 * from the hosts registry on a timer, so a host that appears later shows up without a restart.
 * `readOnly` puts every queue adapter in Bull Board's read-only mode (write endpoints answer 405).
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import { Queue } from 'bullmq';
import type { Hono } from 'hono';
import type { RedisClient } from '../redis.js';
import type { Config } from '../config.js';
import type { FleetKeys } from '../keys.js';
import type { Logger } from '../logger.js';
import { fleetQueueNames } from '../status/queue-names.js';
import { withTimeout } from '../lib/with-timeout.js';
import { BOARD_PATH } from './board-path.js';

export interface FleetBoardOptions {
  readonly redis: RedisClient;
  readonly keys: FleetKeys;
  readonly config: Config;
  readonly logger: Logger;
  /** How often the queue list is refreshed from the hosts registry. @default heartbeat interval × 2 */
  readonly refreshMs?: number;
}

export interface FleetBoard {
  /** The board's Hono app, to mount at `BOARD_PATH` behind the admin guard. */
  readonly app: Hono;
  /** BullMQ queue names currently on the board. */
  queueNames(): string[];
  /** Adds queues of hosts that appeared since the last refresh. */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

export async function createFleetBoard({ redis, keys, config, logger, refreshMs = config.worker.heartbeatIntervalMs * 2 }: FleetBoardOptions): Promise<FleetBoard> {
  const queues = new Map<string, Queue>();
  const serverAdapter = new HonoAdapter(serveStatic).setBasePath(BOARD_PATH);
  const board = createBullBoard({ queues: [], serverAdapter, options: { uiConfig: { boardTitle: 'sandbox-fleet' } } });

  const refresh = async () => {
    const names = await fleetQueueNames(redis, keys, config);
    for (const name of names) {
      if (queues.has(name)) continue;
      const queue = new Queue(name, { connection: redis, prefix: keys.queuePrefix(name) });
      queue.on('error', (error) => logger.debug({ err: error, queue: name }, 'board queue error'));
      const adapter = new BullMQAdapter(queue, { readOnlyMode: config.admin.readOnly });
      queues.set(name, queue);
      board.addQueue(adapter);
      // A Queue whose handshake failed (Redis paused when it was made) fails every call after
      // (queue-pool.ts): it is dropped, and the next refresh adds the queue again.
      queue.waitUntilReady().catch(() => {
        if (queues.get(name) !== queue) return;
        queues.delete(name);
        board.removeQueue(adapter);
        withTimeout(queue.close(), 2_000, () => new Error('queue close timeout')).catch(() => undefined);
      });
    }
  };
  await refresh();
  const app = serverAdapter.registerPlugin();
  const timer = setInterval(() => {
    refresh().catch((error: unknown) => logger.warn({ err: error }, 'bull board queue refresh failed'));
  }, refreshMs);
  timer.unref();

  let closing: Promise<void> | null = null;
  return {
    app,
    queueNames: () => [...queues.keys()].sort(),
    refresh,
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        await Promise.all([...queues.values()].map((q) => withTimeout(q.close(), 2_000, () => new Error('queue close timeout')).catch(() => undefined)));
      })();
      return closing;
    },
  };
}
