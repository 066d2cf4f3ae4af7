/**
 * The stores, providers and producer one fleet process shares between its processors (and the
 * CLI/HTTP surfaces that act directly), built once from the config and one client connection.
 */
import type { RedisClient } from '../redis.js';
import { ArchiveStore } from '../archive/archive-store.js';
import type { Config } from '../config.js';
import { fleetKeys, type FleetKeys } from '../keys.js';
import type { Logger } from '../logger.js';
import { createFleetClient, type FleetClient } from '../producers/fleet-client.js';
import { LocalProvider } from '../providers/local/local-provider.js';
import { ProviderRegistry } from '../providers/provider-registry.js';
import type { SandboxProvider } from '../providers/sandbox-provider.js';
import { lazyVercelProvider } from '../providers/vercel/lazy-vercel-provider.js';
import { BullmqHostOpsTransport } from '../hostops/bullmq-hostops-transport.js';
import { RemoteLocalProvider } from '../hostops/remote-local-provider.js';
import { vercelConnection } from '../providers/vercel/vercel-connection.js';
import { vercelConfigured } from '../providers/provider-hosts.js';
import { AddressStore, type Address } from '../state/address-store.js';
import { CheckpointStore } from '../state/checkpoint-store.js';
import { StoreWriters } from '../state/store-writers.js';
import { VerifyCursor } from '../state/verify-cursor.js';
import { PersistIntentStore } from '../state/persist-intent.js';
import { RuntimeStore } from '../state/runtime-store.js';
import { PendingCreateStore } from '../state/pending-create-store.js';
import { ActivityStore } from '../state/activity-store.js';
import { QuotaStore } from '../state/quota-store.js';
import { WorkspaceResetStore } from '../state/workspace-reset-store.js';
import { activityTrackedProvider } from '../providers/activity-tracked-provider.js';
import { HostRegistry } from '../state/host-registry.js';
import { BaseRegistry } from '../state/base-registry.js';
import { SingleFlight, type LockObserver } from '../locks/single-flight.js';
import type { MetricsRecorder } from '../metrics/metrics-recorder.js';
import { RedisMetricsRecorder } from '../metrics/redis-metrics-recorder.js';
import { lockMetricsObserver } from '../metrics/lock-metrics-observer.js';
import { observedProvider } from '../metrics/observed-provider.js';
import { SandboxUidStore } from '../state/sandbox-uid-store.js';
import { prepareIsolation } from '../sandbox/prepare-isolation.js';
import type { Isolation } from '../sandbox/isolation.js';
import { StatCaches } from '../archive/stat-caches.js';
import { ExecOutputStore } from '../state/exec-output-store.js';
import { EventStore } from '../state/event-store.js';

export interface FleetServices {
  readonly config: Config;
  readonly redis: RedisClient;
  readonly keys: FleetKeys;
  readonly logger: Logger;
  readonly addresses: AddressStore;
  readonly intents: PersistIntentStore;
  readonly checkpoints: CheckpointStore;
  readonly archive: ArchiveStore;
  /** Writers of the archive's object store in flight (what the objects GC must not race). */
  readonly storeWriters: StoreWriters;
  /** Stat caches of the live trees this process persists (kept in memory, written in the background). */
  readonly statCaches: StatCaches;
  /** Where the next `--read-data-subset` slice of the object id space starts. */
  readonly verifyCursor: VerifyCursor;
  readonly providers: ProviderRegistry;
  readonly runtime: RuntimeStore;
  /** Leases of incarnations being created (orphan GC leaves them alone). */
  readonly pendingCreates: PendingCreateStore;
  /** Open turns and running operations of workspaces (the idle reaper reaps only quiescent ones). */
  readonly activity: ActivityStore;
  /** Workspace usage against FLEET_WORKSPACE_QUOTA_*, and who is over it. */
  readonly quota: QuotaStore;
  /** The atomic removal of a workspace's records (`fleet workspace reset`). */
  readonly resets: WorkspaceResetStore;
  readonly hosts: HostRegistry;
  readonly bases: BaseRegistry;
  /** The sandbox uid of every workspace (fleet-wide, never reused). */
  readonly sandboxUids: SandboxUidStore;
  /** Output of commands run for callers on other hosts, streamed through Redis while they run. */
  readonly execOutputs: ExecOutputStore;
  /** What happened, for app pods (`GET /v1/events`): provisioned, persisted, failed, reaped, reset. */
  readonly events: EventStore;
  /** How this process's local provider contains commands (probed once). */
  isolation(): Promise<Isolation>;
  readonly singleFlight: SingleFlight;
  /** Fleet-wide metrics (written to Redis; read back by `/metrics`). */
  readonly metrics: MetricsRecorder;
  /** Producer sharing the client connection (checkpoint ticks, reaps, flushes). */
  readonly client: FleetClient;
  /**
   * The provider of an incarnation (a local one on another host is reached through its hostops
   * queue); its execs and file operations count as the workspace's activity.
   */
  providerFor(address: Address): SandboxProvider;
  /** The local provider of a host (this one, or a remote one through its hostops queue). */
  localProviderOn(hostId: string): SandboxProvider;
  close(): Promise<void>;
}

export interface ServicesOptions {
  readonly config: Config;
  readonly redis: RedisClient;
  readonly logger: Logger;
  /** Extra providers (e.g. vercel) built by the caller. */
  readonly extraProviders?: readonly SandboxProvider[];
  readonly lockObserver?: LockObserver;
  /** @default a `RedisMetricsRecorder` on `redis` */
  readonly metrics?: MetricsRecorder;
}

export function createServices({ config, redis, logger, extraProviders = [], lockObserver, metrics: givenMetrics }: ServicesOptions): FleetServices {
  const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
  const metrics = givenMetrics ?? new RedisMetricsRecorder(redis, keys, logger);
  const sandboxUids = new SandboxUidStore(redis, keys, config.sandbox.uidRange);
  const isolation = () => prepareIsolation(config, logger);
  const local = new LocalProvider({
    hostId: config.hostId,
    liveRoot: config.paths.liveRoot,
    snapshotRoot: config.paths.snapshotRoot,
    archiveRoot: config.paths.archiveRoot,
    systemPath: config.systemPath,
    copyTimeoutMs: config.deadlines.persistMs,
    treeLimits: config.treeLimits,
    onRsyncExit: (code) => void metrics.rsyncExit(code),
    restoreViaTar: config.restoreViaTar,
    onRestoreTarFailure: (failure) => logger.warn({ failure }, 'restore through tar failed; the revision was materialised instead'),
    sandbox: { isolation, uidFor: (workspaceId) => sandboxUids.allocate(workspaceId) },
  });
  // The Vercel provider exists when it is the default or credentials are configured.
  const useVercel = vercelConfigured(config) && !extraProviders.some((p) => p.name === 'vercel');
  // Credentials are checked now (a bad setting fails start-up); the SDK loads on first use.
  if (useVercel) vercelConnection(config.vercel);
  const vercel = useVercel ? [lazyVercelProvider(config, { persistent: config.vercel.persistent, sandboxTimeoutMs: config.vercel.sandboxTimeoutMs, systemPath: config.systemPath })] : [];
  // Every provider call is timed and its outcome counted (fleet_provider_calls_total).
  const providers = new ProviderRegistry([local, ...vercel, ...extraProviders].map((provider) => observedProvider(provider, metrics)));
  const client = createFleetClient({ config, connection: redis });
  const hosts = new HostRegistry(redis, keys, config.worker.heartbeatIntervalMs);
  // A host that stops heartbeating stops being waited for (its sandboxes are gone with it).
  const hostOps = new BullmqHostOpsTransport(client.pool, config.deadlines.provisionMs, { hostAlive: (hostId) => hosts.isAlive(hostId, 'local', config.hostId), pollMs: config.worker.heartbeatIntervalMs });
  const execOutputs = new ExecOutputStore(redis, keys);
  const remotes = new Map<string, SandboxProvider>();
  const localProviderOn = (hostId: string): SandboxProvider => {
    if (hostId === config.hostId) return providers.get('local');
    let remote = remotes.get(hostId);
    if (!remote) {
      remote = observedProvider(new RemoteLocalProvider(hostOps, hostId, execOutputs), metrics);
      remotes.set(hostId, remote);
    }
    return remote;
  };
  const addresses = new AddressStore(redis, keys);
  const activity = new ActivityStore(redis, keys, { turnTtlMs: config.turnTtlMs, leaseMs: config.worker.heartbeatIntervalMs * 3, logger });
  const statCaches = new StatCaches((file, error) => logger.warn({ err: error, file }, 'stat cache not written'));
  const rawProviderFor = (address: Address) => (address.provider === 'local' ? localProviderOn(address.hostId) : providers.get(address.provider));
  return {
    config,
    redis,
    keys,
    logger,
    addresses,
    intents: new PersistIntentStore(redis, keys),
    checkpoints: new CheckpointStore(redis, keys),
    archive: new ArchiveStore(config.paths.archiveRoot, { treePatches: config.treePatches, packObjects: config.packObjects }),
    storeWriters: new StoreWriters(redis, keys),
    statCaches,
    verifyCursor: new VerifyCursor(redis, keys),
    providers,
    runtime: new RuntimeStore(redis, keys, config.deadlines.provisionMs),
    pendingCreates: new PendingCreateStore(redis, keys),
    activity,
    quota: new QuotaStore(redis, keys, config.quota),
    resets: new WorkspaceResetStore(redis, keys),
    hosts,
    bases: new BaseRegistry(redis, keys),
    sandboxUids,
    execOutputs,
    events: new EventStore(redis, keys),
    isolation,
    singleFlight: new SingleFlight(redis, keys, logger, { ttlMs: config.worker.lockTtlMs, maxHoldMs: config.deadlines.provisionMs }, lockObserver ?? lockMetricsObserver(metrics)),
    metrics,
    client,
    providerFor: (address) => activityTrackedProvider(rawProviderFor(address), { activity, addresses }, address.workspaceId),
    localProviderOn,
    close: async () => {
      await metrics.flush?.();
      await statCaches.flush();
      await client.close();
    },
  };
}
