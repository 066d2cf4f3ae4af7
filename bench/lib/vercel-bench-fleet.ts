/**
 * A fleet whose Vercel provider is the real `@vercel/sandbox` SDK against a loopback stand-in
 * (test/helpers/vercel-standin, which runs the sandbox's commands on this host), with every SDK
 * request and response body counted at the SDK's `fetch` (counting-fetch.ts). Released with the
 * bench environment.
 */
import { createLogger } from '../../src/logger.js';
import { persistWorkspace, type PersistDeps } from '../../src/persist/persist-workspace.js';
import { apiUrlFetch } from '../../src/providers/vercel/api-url-fetch.js';
import { vercelConnection, type VercelConnection } from '../../src/providers/vercel/vercel-connection.js';
import { VercelProvider } from '../../src/providers/vercel/vercel-provider.js';
import { provisionWorkspace } from '../../src/provision/provision-workspace.js';
import type { PersistResult } from '../../src/queues/persist.js';
import { closeRedis, createRedis } from '../../src/redis.js';
import { createServices, type FleetServices } from '../../src/app/services.js';
import type { ProcessorContext } from '../../src/jobs/processor-context.js';
import { standinEnv } from '../../test/helpers/vercel-standin/standin-env.js';
import { VercelStandin } from '../../test/helpers/vercel-standin/vercel-standin.js';
import type { BenchEnv } from './bench-env.js';
import { countingFetch, type TrafficCounter, type TrafficKind } from './counting-fetch.js';

// Long enough for a full transfer of a 100,000-file tree on a shared machine.
const DEADLINE_MS = 30 * 60_000;

/** One persist: what it returned, the bytes it moved by kind and in all, how long it took. */
export interface MeasuredPersist {
  readonly result: PersistResult;
  readonly traffic: Readonly<Record<TrafficKind, number>>;
  readonly total: number;
  readonly ms: number;
}

export interface VercelBenchFleet {
  readonly services: FleetServices;
  /** The SDK connection (with the counting fetch) the provider uses. */
  readonly connection: VercelConnection;
  readonly counter: TrafficCounter;
  /** Provisions `workspaceId` on Vercel; returns the host path of its tree in the stand-in. */
  provision(workspaceId: string): Promise<string>;
  /** A turn-end reconcile of `workspaceId` through `deps`, measured. */
  persist(workspaceId: string, deps: PersistDeps): Promise<MeasuredPersist>;
}

export async function startVercelBenchFleet(env: BenchEnv): Promise<VercelBenchFleet> {
  const standin = await VercelStandin.start();
  env.releasers.add('stand-in', () => standin.close());
  // FLEET_ARCHIVE_TREE_PATCHES=false in the bench's environment: every tree stored whole (the figure before tree patches).
  const config = env.config({
    ...standinEnv(standin),
    FLEET_ARCHIVE_FORMAT: '2',
    FLEET_ARCHIVE_TREE_PATCHES: process.env.FLEET_ARCHIVE_TREE_PATCHES ?? 'true',
  });
  const redis = createRedis({ url: config.redis.url!, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'bench-vercel' });
  env.releasers.add('services connection', () => closeRedis(redis));
  const { fetch, counter } = countingFetch(apiUrlFetch(standin.url));
  const connection: VercelConnection = { ...vercelConnection(config.vercel), fetch };
  const vercel = new VercelProvider({
    connection,
    mirror: { root: config.paths.vercelMirrorRoot, limits: config.treeLimits, systemPath: config.systemPath },
    pollIntervalMs: 20,
  });
  const logger = createLogger({ level: 'silent' });
  const services = createServices({ config, redis, logger, extraProviders: [vercel] });
  env.releasers.add('services', () => services.close());
  const ctx = (): ProcessorContext => ({ logger, signal: AbortSignal.timeout(DEADLINE_MS), queue: 'bench', jobId: 'bench', attempt: 1, maxAttempts: 1, deadlineAt: Date.now() + DEADLINE_MS, progress: async () => undefined });
  return {
    services,
    connection,
    counter,
    async provision(workspaceId) {
      const { handle } = await provisionWorkspace(services, { workspaceId, provider: 'vercel', lane: 'default' }, ctx());
      return standin.sandboxDir(handle, '/vercel/sandbox/workspace');
    },
    async persist(workspaceId, deps) {
      const address = (await services.addresses.get(workspaceId))!;
      counter.reset();
      const started = performance.now();
      const result = await persistWorkspace(deps, { workspaceId, generation: address.generation, delete: true, force: false, reason: 'turn-end', turnId: null, coveredSeq: 0 }, ctx());
      const ms = performance.now() - started;
      const traffic = counter.totals();
      return { result, traffic, total: Object.values(traffic).reduce((a, b) => a + b, 0), ms };
    },
  };
}
