/**
 * A Redis command that got no answer within the connection's `commandTimeout` fails with a
 * `RedisCommandTimeoutError`, not with ioredis's bare `Error("Command timed out")`, so it is
 * classified by its class (redis-error-code.ts: `NOANSWER`) and crosses the queue and the HTTP
 * API as `RedisUnavailable`, never as untyped text. That is what a caller meets while Redis
 * restarts, loads its dataset or is paused: before this, a turn's persist request failed with
 * an error nothing could tell from a bug.
 *
 * ioredis creates that error inside `Command#setTimeout` (a public method, called for every
 * command of a connection with `commandTimeout`), so the method is replaced once on the class,
 * which covers single connections, cluster nodes and the connections BullMQ duplicates alike.
 * The replacement keeps ioredis's timer field, which its own settle path clears.
 * test/integration/redis-command-timeout.test.ts pauses a real redis-server to show the class
 * arrives, and fails if an ioredis upgrade stops calling the method.
 */
import { Command } from 'ioredis';

export class RedisCommandTimeoutError extends Error {
  override readonly name = 'RedisCommandTimeoutError';
  constructor(
    /** The command's name (`evalsha`, `xadd`, ...). */
    readonly command: string,
    readonly timeoutMs: number,
  ) {
    super(`Redis gave no answer to ${command} within ${timeoutMs} ms (the command may or may not have been applied)`);
  }
}

interface TimedCommand {
  readonly name: string;
  isSettled: boolean;
  reject(error: Error): void;
  _commandTimeoutTimer?: NodeJS.Timeout;
}

let installed = false;

/** Replaces ioredis's command timeout with the typed one (idempotent). */
export function typeRedisCommandTimeouts(): void {
  if (installed) return;
  installed = true;
  (Command.prototype as unknown as { setTimeout(this: TimedCommand, ms: number): void }).setTimeout = function setTimeout(this: TimedCommand, ms: number): void {
    if (this._commandTimeoutTimer) return;
    this._commandTimeoutTimer = globalThis.setTimeout(() => {
      if (!this.isSettled) this.reject(new RedisCommandTimeoutError(this.name, ms));
    }, ms);
  };
}
