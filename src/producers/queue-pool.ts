/**
 * Lazily created BullMQ `Queue` and `QueueEvents` instances per BullMQ queue name, sharing one
 * client connection (queues) and one blocking connection per QueueEvents. `close()` closes them
 * all, each raced against a timer.
 */
import { bullTelemetry } from '../observability/tracing.js';
import { Queue, QueueEvents } from 'bullmq';
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import { withTimeout } from '../lib/with-timeout.js';

export class QueuePool {
  readonly #queues = new Map<string, Queue>();
  readonly #events = new Map<string, Promise<QueueEvents>>();
  readonly #blocking: RedisClient[] = [];

  constructor(
    private readonly connection: RedisClient,
    private readonly keys: FleetKeys,
    /** Creates a blocking (`worker`-role) connection for a QueueEvents. */
    private readonly blockingConnection: () => RedisClient,
  ) {}

  queue(name: string): Queue {
    let queue = this.#queues.get(name);
    if (!queue) {
      const telemetry = bullTelemetry();
      queue = new Queue(name, { connection: this.connection, prefix: this.keys.queuePrefix(name), ...(telemetry ? { telemetry } : {}) });
      queue.on('error', () => undefined);
      // Every waiting caller adds listeners; thousands of concurrent waits are normal here.
      queue.setMaxListeners(0);
      this.#queues.set(name, queue);
      // BullMQ keeps the outcome of a Queue's handshake (its version check, the first command it
      // sends): a Queue made while Redis gave no answer (paused, failing over) fails every call
      // after with that same error, even once Redis is back. Such a queue is dropped, so the
      // next caller makes a new one; the callers that had it got a retryable RedisUnavailable.
      const made = queue;
      made.waitUntilReady().catch(() => {
        if (this.#queues.get(name) !== made) return;
        this.#queues.delete(name);
        withTimeout(made.close(), 2_000, () => new Error('queue close timeout')).catch(() => undefined);
      });
    }
    return queue;
  }

  /**
   * A running QueueEvents for `name` (created once). It starts reading the event stream at its
   * current last entry rather than at "$": BullMQ's default only sees events published after its
   * first blocking read, so a job finishing in the gap between `waitForJob`'s state check
   * and that first read would be missed and its waiter would hang.
   */
  events(name: string): Promise<QueueEvents> {
    let events = this.#events.get(name);
    if (!events) {
      events = (async () => {
        const last = (await this.connection.xrevrange(this.keys.bullQueue(name, 'events'), '+', '-', 'COUNT', 1)) as [string, string[]][];
        const connection = this.blockingConnection();
        this.#blocking.push(connection);
        const created = new QueueEvents(name, { connection, prefix: this.keys.queuePrefix(name), autorun: true, lastEventId: last[0]?.[0] ?? '0-0' });
        created.on('error', () => undefined);
        created.setMaxListeners(0);
        await created.waitUntilReady();
        return created;
      })();
      // A failed start (Redis down) must not be cached: the next caller tries again.
      events.catch(() => {
        if (this.#events.get(name) === events) this.#events.delete(name);
      });
      this.#events.set(name, events);
    }
    return events;
  }

  /** Names of the queues opened so far. */
  names(): string[] {
    return [...this.#queues.keys()];
  }

  async close(): Promise<void> {
    const closing: Promise<unknown>[] = [];
    for (const queue of this.#queues.values()) closing.push(withTimeout(queue.close(), 2_000, () => new Error('queue close timeout')).catch(() => undefined));
    for (const events of this.#events.values()) {
      closing.push(
        events.then((e) => withTimeout(e.close(), 2_000, () => new Error('events close timeout'))).catch(() => undefined),
      );
    }
    this.#queues.clear();
    this.#events.clear();
    await Promise.all(closing);
    // QueueEvents leave passed-in connections open (BullMQ treats them as shared).
    for (const connection of this.#blocking.splice(0)) connection.disconnect();
  }
}
