/**
 * Every timeout a worker process applies, as one object for its boot log line (issue 19.10):
 * each served queue's job deadline (and how a job may carry its own), lock and stall intervals,
 * heartbeats, shutdown and idle times.
 */
import type { Config } from '../config.js';
import type { QueueDefinition } from '../queues/index.js';
import { EXEC_JOB_SLACK_MS } from '../hostops/host-op-args.js';

export interface ServedQueue {
  readonly bullName: string;
  readonly definition: QueueDefinition;
}

export function effectiveTimeouts(config: Config, served: readonly ServedQueue[]): Record<string, unknown> {
  const jobDeadlinesMs: Record<string, number | string> = {};
  for (const { bullName, definition } of served) {
    const ms = definition.deadlineMs(config);
    jobDeadlinesMs[bullName] = definition.jobDeadlineMs ? `${ms} unless the job carries its caller's deadline (exec: its timeout + ${EXEC_JOB_SLACK_MS})` : ms;
  }
  return {
    jobDeadlinesMs,
    execDefaultMs: config.deadlines.execMs,
    lockDurationMs: config.worker.lockDurationMs,
    stalledIntervalMs: config.worker.stalledIntervalMs,
    maxStalledCount: config.worker.maxStalledCount,
    singleFlightLockTtlMs: config.worker.lockTtlMs,
    heartbeatIntervalMs: config.worker.heartbeatIntervalMs,
    redisCommandTimeoutMs: config.redis.commandTimeoutMs,
    shutdownGraceMs: config.shutdown.graceMs,
    shutdownFlushMs: config.shutdown.flushMs,
    checkpointIntervalMs: config.checkpointIntervalMs,
    idleTtlMs: config.idleTtlMs,
    turnTtlMs: config.turnTtlMs,
    vercelSandboxTimeoutMs: config.vercel.sandboxTimeoutMs,
  };
}
