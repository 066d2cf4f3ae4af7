// In-process services over the real local provider, real rsync and the shared test Redis.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createLogger } from '../../src/logger.js';
import { persistWorkspace, type PersistRequest } from '../../src/persist/persist-workspace.js';
import { provisionWorkspace } from '../../src/provision/provision-workspace.js';
import type { ProvisionResult } from '../../src/queues/provision.js';
import type { PersistResult } from '../../src/queues/persist.js';
import { createServices, type FleetServices } from '../../src/app/services.js';
import type { ProcessorContext } from '../../src/jobs/processor-context.js';
import { persistDeps } from '../../src/app/persist-deps.js';
import { livePaths } from '../../src/providers/local/live-paths.js';
import type { Config } from '../../src/config.js';
import { addCleanup } from './cleanup.js';
import { testConfig, testConnection } from './fleet-env.js';

export interface Harness {
  readonly config: Config;
  readonly env: Record<string, string>;
  readonly services: FleetServices;
  ctx(attempt?: number): ProcessorContext;
  provision(workspaceId: string, lane?: string): Promise<ProvisionResult>;
  persist(workspaceId: string, options?: Partial<PersistRequest>): Promise<PersistResult>;
  /** Absolute path of the live tree of a workspace on this host. */
  live(workspaceId: string): string;
  /** Writes files (relative path → content) into the live tree. */
  write(workspaceId: string, files: Record<string, string | Buffer>): Promise<void>;
}

export async function createHarness(overrides: Record<string, string> = {}): Promise<Harness> {
  const { config, env } = await testConfig(overrides);
  const redis = testConnection(config);
  const logger = createLogger({ level: 'silent' });
  const services = createServices({ config, redis, logger });
  addCleanup(() => services.close());
  // Host liveness is read from worker heartbeats; register this test process as host `local`.
  await redis.zadd(services.keys.hosts(), Date.now() + 3_600_000, config.hostId);
  const ctx = (attempt = 1): ProcessorContext => ({
    logger,
    signal: AbortSignal.timeout(120_000),
    queue: 'test',
    jobId: 'test',
    attempt,
    maxAttempts: 5,
    deadlineAt: Date.now() + 120_000,
    progress: async () => undefined,
  });
  const harness: Harness = {
    config,
    env,
    services,
    ctx,
    provision: (workspaceId, lane = 'default') => provisionWorkspace(services, { workspaceId, provider: 'local', lane }, ctx()),
    async persist(workspaceId, options = {}) {
      const address = await services.addresses.get(workspaceId);
      return persistWorkspace(
        persistDeps(services),
        { workspaceId, generation: address?.generation ?? 1, delete: true, force: false, reason: 'turn-end', turnId: null, coveredSeq: 0, ...options },
        ctx(),
      );
    },
    live: (workspaceId) => livePaths(config.paths.liveRoot, workspaceId).root,
    async write(workspaceId, files) {
      const root = harness.live(workspaceId);
      for (const [rel, content] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
        await writeFile(path.join(root, rel), content);
      }
    },
  };
  return harness;
}

/** Expects a promise to reject with a fleet error of `code`; returns the error. */
export async function rejectsWith(promise: Promise<unknown>, code: string): Promise<Error & { code: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e as Error & { code: string },
  );
  if (!error) throw new Error(`expected a ${code} error, but the call succeeded`);
  if (error.code !== code) throw new Error(`expected a ${code} error, got ${error.code ?? error.name}: ${error.message}`);
  return error;
}
