/**
 * The fleet as real processes for a benchmark (loss-window): two local hosts, each running the
 * Procfile's provision, persist and checkpoint workers as `node bin/fleet.js worker` children
 * (chaos/fleet-processes.ts), plus a pod serving the Vercel queues (`--host vercel`) against the
 * loopback stand-in. Every process of a group can be killed with its pod's disk (FLEET_HOME, with
 * the live trees), or stopped gracefully, and started again.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { ManagedProcess } from '../../chaos/fleet-processes.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createFleetClient, type FleetClient } from '../../src/producers/fleet-client.js';
import { LocalProvider } from '../../src/providers/local/local-provider.js';
import { VERCEL_HOST_ID } from '../../src/providers/vercel/sandbox-info.js';
import { createVercelProvider } from '../../src/providers/vercel/vercel-provider.js';
import type { SandboxProvider } from '../../src/providers/sandbox-provider.js';
import type { ProvisionResult } from '../../src/queues/provision.js';
import { standinEnv } from '../../test/helpers/vercel-standin/standin-env.js';
import { VercelStandin } from '../../test/helpers/vercel-standin/vercel-standin.js';
import type { BenchEnv } from './bench-env.js';

/** A group of processes that dies together: a local host, or the pod serving the Vercel queues. */
export type GroupId = 'host-a' | 'host-b' | typeof VERCEL_HOST_ID;
export const LOCAL_HOSTS = ['host-a', 'host-b'] as const;
// The pod serving the Vercel queues has its own host id and disk (it holds no live tree).
const VERCEL_POD = 'vercel-pod';

export interface ProcessFleet {
  readonly client: FleetClient;
  readonly config: Config;
  readonly standin: VercelStandin;
  readonly processes: readonly ManagedProcess[];
  /** The processes of a group. */
  group(id: GroupId): ManagedProcess[];
  /** SIGKILL (with the loss of the pod's disk and live trees) or SIGTERM every process of a group, then start them again. */
  restartGroup(id: GroupId, how: 'SIGKILL' | 'SIGTERM', loseDisk: boolean): Promise<void>;
  /** The host path of a provisioned workspace's live tree (the agent writes there; judged from there). */
  liveRoot(result: ProvisionResult): Promise<string>;
  /** The provider holding a group's sandboxes. */
  provider(id: GroupId): SandboxProvider;
  close(): Promise<void>;
}

/**
 * Starts the processes on `env`'s Redis; `overrides` go into every process's environment (the
 * checkpoint interval and shutdown flush keep their defaults unless given).
 */
export async function startProcessFleet(env: BenchEnv, overrides: Record<string, string> = {}): Promise<ProcessFleet> {
  const standin = await VercelStandin.start();
  env.releasers.add('stand-in', () => standin.close());
  if (process.env.LOSS_WINDOW_DEBUG) {
    for (const event of ['delete', 'resume', 'create']) standin.events.on(event, (detail: unknown) => process.stderr.write(`[debug] stand-in ${event} ${JSON.stringify(detail)}\n`));
    standin.events.on('recorded', (r: { method: string; path: string; route: string | null }) => {
      if (r.method === 'DELETE' || /stop|resume/.test(r.path)) process.stderr.write(`[debug] stand-in ${r.method} ${r.path} ${r.route}\n`);
    });
  }
  const archiveRoot = await env.subdir('archive');
  const common = {
    ...standinEnv(standin),
    FLEET_PROVIDER: 'local',
    FLEET_ARCHIVE_ROOT: archiveRoot,
    FLEET_SNAPSHOT_ROOT: await env.subdir('snapshots'),
    // A killed worker's jobs are taken over within seconds (as in the chaos run), not 30 s.
    FLEET_LOCK_DURATION_MS: '3000',
    FLEET_STALLED_INTERVAL_MS: '1500',
    FLEET_MAX_STALLED_COUNT: '20',
    FLEET_HEARTBEAT_INTERVAL_MS: '500',
    FLEET_LOCK_TTL_MS: '3000',
    FLEET_SHUTDOWN_FLUSH_MS: '10000',
    ...overrides,
  };
  const home = (hostId: string) => path.join(env.dir, 'pods', hostId);
  const hostEnv = (hostId: string) => env.fleetEnv({ ...common, FLEET_HOST_ID: hostId, FLEET_HOME: home(hostId) });
  const processes: ManagedProcess[] = [];
  for (const hostId of LOCAL_HOSTS) {
    for (const queues of ['provision', 'persist', 'checkpoint']) processes.push(new ManagedProcess({ name: `${hostId}/${queues}`, hostId, queues, env: hostEnv(hostId) }));
  }
  for (const queues of ['persist', 'checkpoint']) processes.push(new ManagedProcess({ name: `vercel/${queues}`, hostId: VERCEL_HOST_ID, queues, args: ['--host', VERCEL_HOST_ID], env: hostEnv(VERCEL_POD) }));
  env.releasers.add('fleet processes', () => Promise.all(processes.map((p) => p.kill('SIGKILL'))).then(() => undefined));
  await Promise.all(processes.map((p) => p.start()));

  const config = loadConfig(hostEnv('host-a'));
  const client = createFleetClient({ config });
  env.releasers.add('fleet client', () => client.close());
  const providers = new Map<string, SandboxProvider>(
    LOCAL_HOSTS.map((h) => [h, new LocalProvider({ hostId: h, liveRoot: path.join(home(h), 'live'), snapshotRoot: common.FLEET_SNAPSHOT_ROOT, archiveRoot, systemPath: config.systemPath, copyTimeoutMs: 60_000 })]),
  );
  providers.set(VERCEL_HOST_ID, createVercelProvider(config, { pollIntervalMs: 50 }));
  const group = (id: GroupId) => processes.filter((p) => p.spec.hostId === id);
  return {
    client,
    config,
    standin,
    processes,
    group,
    provider: (id) => providers.get(id)!,
    async restartGroup(id, how, loseDisk) {
      const members = group(id);
      await Promise.all(members.map((p) => p.kill(how)));
      if (loseDisk) await rm(home(id === VERCEL_HOST_ID ? VERCEL_POD : id), { recursive: true, force: true });
      await Promise.all(members.map((p) => p.restart()));
    },
    async liveRoot(result) {
      if (result.provider === 'vercel') return standin.sandboxDir(result.handle, '/vercel/sandbox/workspace');
      const tree = await providers.get(result.hostId)!.openTree(result.handle, AbortSignal.timeout(30_000));
      await tree.release();
      return tree.path;
    },
    close: () => client.close(),
  };
}
