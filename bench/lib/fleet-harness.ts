/**
 * The fleet's own services in this process (stores, archive, local provider) over a benchmark's
 * private Redis, the way a worker process builds them, plus a processor context and the
 * provision and persist calls a persist worker would make.
 */
import type { Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { persistWorkspace, type PersistDeps, type PersistRequest } from '../../src/persist/persist-workspace.js';
import { provisionWorkspace } from '../../src/provision/provision-workspace.js';
import type { PersistResult } from '../../src/queues/persist.js';
import type { ProvisionResult } from '../../src/queues/provision.js';
import { closeRedis, createRedis } from '../../src/redis.js';
import { createServices, type FleetServices } from '../../src/app/services.js';
import type { ProcessorContext, Progress } from '../../src/jobs/processor-context.js';
import { persistDeps as persistDepsOf } from '../../src/app/persist-deps.js';
import { livePaths } from '../../src/providers/local/live-paths.js';
import type { BenchEnv } from './bench-env.js';

export interface FleetHarness {
  readonly config: Config;
  readonly services: FleetServices;
  ctx(onProgress?: (update: Progress) => void): ProcessorContext;
  provision(workspaceId: string): Promise<ProvisionResult>;
  /** The persist deps a persist worker builds (override pieces to observe them). */
  persistDeps(overrides?: Partial<PersistDeps>): PersistDeps;
  /** A turn-end reconcile of the workspace's live incarnation. */
  persist(workspaceId: string, options?: { deps?: Partial<PersistDeps>; onProgress?: (update: Progress) => void }): Promise<PersistResult>;
  /** The live tree of a workspace on this host. */
  live(workspaceId: string): string;
}

const DEADLINE_MS = 10 * 60_000;

/** Builds services for `env.config(overrides)`; released with the environment. */
export async function startFleetHarness(env: BenchEnv, overrides: Record<string, string> = {}): Promise<FleetHarness> {
  const config = env.config(overrides);
  const redis = createRedis({ url: config.redis.url!, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'bench-services' });
  env.releasers.add('services connection', () => closeRedis(redis));
  const logger = createLogger({ level: 'silent' });
  const services = createServices({ config, redis, logger });
  env.releasers.add('services', () => services.close());
  // Host liveness comes from worker heartbeats; this process stands in for host `local`.
  await redis.zadd(services.keys.hosts(), Date.now() + 24 * 3_600_000, config.hostId);
  const ctx = (onProgress?: (update: Progress) => void): ProcessorContext => ({
    logger,
    signal: AbortSignal.timeout(DEADLINE_MS),
    queue: 'bench',
    jobId: 'bench',
    attempt: 1,
    maxAttempts: 5,
    deadlineAt: Date.now() + DEADLINE_MS,
    progress: async (update) => onProgress?.(update),
  });
  const persistDeps = (overrides: Partial<PersistDeps> = {}): PersistDeps => ({ ...persistDepsOf(services), ...overrides });
  return {
    config,
    services,
    ctx,
    provision: (workspaceId) => provisionWorkspace(services, { workspaceId, provider: 'local', lane: 'default' }, ctx()),
    persistDeps,
    async persist(workspaceId, options = {}) {
      const address = await services.addresses.get(workspaceId);
      if (!address) throw new Error(`bench: workspace ${workspaceId} is not provisioned`);
      const request: PersistRequest = { workspaceId, generation: address.generation, delete: true, force: false, reason: 'turn-end', turnId: null, coveredSeq: 0 };
      return persistWorkspace(persistDeps(options.deps), request, ctx(options.onProgress));
    },
    live: (workspaceId) => livePaths(config.paths.liveRoot, workspaceId).root,
  };
}
