// Many hosts (issue 17, item 4): three hosts, each running the Procfile's provision, persist and
// checkpoint processes with its own FLEET_HOST_ID and its own disk (live trees), one archive root
// shared by all (as on NFS). 300 workspaces are placed over them, each written and acknowledged
// by a persist; when a third are acknowledged, host-b dies (SIGKILL of its processes, its disk
// removed) while the rest of the load runs. Every workspace is then provisioned again and judged
// from outside: the ones host-b held are restored on the others from the archive, every
// acknowledged file is there (none lost), and each workspace has exactly one sandbox on the
// surviving hosts, the one its address names (none doubled).
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManagedProcess } from '../../chaos/fleet-processes.js';
import { loadConfig } from '../../src/config.js';
import { createFleetClient } from '../../src/producers/fleet-client.js';
import { LocalProvider } from '../../src/providers/local/local-provider.js';
import type { ProvisionResult } from '../../src/queues/provision.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir, testConnection, testEnv } from '../helpers/fleet-env.js';
import { waitFor } from '../helpers/wait.js';
import { FLEET_BIN, spawnTracked } from '../helpers/processes.js';
import { WorkspaceConflictError } from '../../src/errors/workspace-conflict-error.js';

const HOSTS = ['host-a', 'host-b', 'host-c'] as const;
const DEAD = 'host-b';
const WORKSPACES = Number(process.env.FLEET_MULTI_HOST_WORKSPACES ?? 300);
// Calls in flight at once (the callers of an app with many users, not one per workspace at once).
const CALLERS = 30;
const CALL_TIMEOUT_MS = 20_000;

describe('three hosts, one shared archive', () => {
  it(`places ${WORKSPACES} workspaces; a host killed mid-load loses none and doubles none`, { timeout: 600_000 }, async () => {
    const shared = {
      FLEET_ARCHIVE_ROOT: await tempDir('archive'),
      FLEET_SNAPSHOT_ROOT: await tempDir('snapshots'),
      // A dead host's jobs and locks are given up within seconds.
      FLEET_LOCK_DURATION_MS: '3000',
      FLEET_STALLED_INTERVAL_MS: '1500',
      FLEET_MAX_STALLED_COUNT: '20',
      FLEET_LOCK_TTL_MS: '3000',
      // A host is dead after three missed heartbeats: 6 s here, so a live host slowed by the
      // machine's load (nine fleet processes and thirty callers on two cores) is never taken for dead.
      FLEET_HEARTBEAT_INTERVAL_MS: '2000',
      // Orphans (a create whose provisioner died before publishing) are old enough to reap after
      // 30 s, and each host's janitor looks every 2 s: the fleet converges while the test waits.
      FLEET_PROVISION_DEADLINE_MS: '30000',
      FLEET_GC_SCHEDULE: 'orphans=2000',
    };
    const base = await testEnv(shared);
    const homes = new Map<string, string>();
    for (const hostId of HOSTS) homes.set(hostId, await tempDir(`home-${hostId}`));
    const hostEnv = (hostId: string) => ({ ...base, FLEET_HOST_ID: hostId, FLEET_HOME: homes.get(hostId)! });
    const processes = HOSTS.flatMap((hostId) => ['provision', 'persist', 'checkpoint'].map((queues) => new ManagedProcess({ name: `${hostId}/${queues}`, hostId, queues, env: hostEnv(hostId) })));
    addCleanup(() => Promise.all(processes.map((p) => p.kill('SIGKILL'))).then(() => undefined));
    await Promise.all(processes.map((p) => p.start()));
    // The app pod: a client of the shared Redis, on no host of its own.
    const config = loadConfig({ ...base, FLEET_HOST_ID: 'app-pod' });
    const client = createFleetClient({ config });
    addCleanup(() => client.close());
    const redis = testConnection(config);
    const providers = new Map<string, LocalProvider>(HOSTS.map((hostId) => [hostId, new LocalProvider({ hostId: hostId as string, liveRoot: path.join(homes.get(hostId)!, 'live'), snapshotRoot: shared.FLEET_SNAPSHOT_ROOT, archiveRoot: shared.FLEET_ARCHIVE_ROOT, systemPath: config.systemPath, copyTimeoutMs: 60_000 })]));

    const placedOn = new Map<string, string>();
    const acked = new Set<string>();
    let killed: Promise<void> | null = null;
    const heldByDeadAtKill: string[] = [];
    // Workspaces reset after a WorkspaceConflict, with where they were last placed at that moment.
    const resets: { workspaceId: string; lastPlaced: string | undefined }[] = [];
    const lastPlaced = new Map<string, string>();
    const killDeadHost = async () => {
      heldByDeadAtKill.push(...[...acked].filter((ws) => placedOn.get(ws) === DEAD));
      await Promise.all(processes.filter((p) => p.spec.hostId === DEAD).map((p) => p.kill('SIGKILL')));
      await rm(homes.get(DEAD)!, { recursive: true, force: true });
      // Dead to the fleet once its heartbeat is three intervals old (host-registry isAlive).
      await waitFor('the fleet to see host-b dead', async () => {
        const seen = await redis.zscore(client.keys.sandboxHosts(), DEAD);
        return seen === null || Number(seen) < Date.now() - 3 * config.worker.heartbeatIntervalMs ? true : undefined;
      });
    };

    // One workspace's life: provision, write its file into the live tree, persist until acknowledged.
    // A call caught by the kill fails or times out; the caller tries again, as an app would.
    const place = async (workspaceId: string) => {
      for (let attempt = 1; ; attempt++) {
        try {
          const { result } = await client.provision({ workspaceId }, { wait: true, timeoutMs: CALL_TIMEOUT_MS });
          const placed = result as ProvisionResult;
          lastPlaced.set(workspaceId, placed.hostId);
          if (placed.hostId === DEAD && killed !== null) throw new Error(`${workspaceId} placed on the dead host after the kill`);
          await providers.get(placed.hostId)!.writeFiles(placed.handle, [{ path: 'owner.txt', content: Buffer.from(workspaceId) }]);
          await client.persist({ workspaceId, generation: placed.generation, reason: 'turn-end' }, { wait: true, timeoutMs: CALL_TIMEOUT_MS });
          placedOn.set(workspaceId, placed.hostId);
          acked.add(workspaceId);
          if (acked.size === Math.floor(WORKSPACES / 3) && killed === null) killed = killDeadHost();
          return;
        } catch (error) {
          // Caught on host-b before its first acknowledged persist: the fleet refuses to recreate
          // a known workspace it cannot restore (G6); the app starts it over, as the error says.
          if (error instanceof WorkspaceConflictError) {
            const reset = spawnTracked(process.execPath, [FLEET_BIN, 'workspace', 'reset', workspaceId, '--confirm', '--json'], { env: { ...base, FLEET_HOST_ID: 'app-pod' } });
            expect(await reset.exited, reset.stderr()).toEqual({ code: 0, signal: null });
            expect(acked.has(workspaceId)).toBe(false);
            resets.push({ workspaceId, lastPlaced: lastPlaced.get(workspaceId) });
            continue;
          }
          if (attempt >= 8) throw new Error(`${workspaceId}: no acknowledged placement after ${attempt} attempts: ${(error as Error).message}`);
          if (killed) await killed;
        }
      }
    };
    const ids = Array.from({ length: WORKSPACES }, (_, i) => `mh-${String(i).padStart(3, '0')}`);
    let next = 0;
    await Promise.all(
      Array.from({ length: CALLERS }, async () => {
        while (next < ids.length) await place(ids[next++]!);
      }),
    );
    await killed;
    expect(acked.size).toBe(WORKSPACES);
    // Only workspaces last placed on the dead host (or whose placement never answered), none acknowledged, needed a reset.
    for (const reset of resets) expect([DEAD, undefined], reset.workspaceId).toContain(reset.lastPlaced);
    // The kill was mid-load and hit a host holding acknowledged workspaces.
    expect(heldByDeadAtKill.length).toBeGreaterThan(0);

    // Judged from outside: provision every workspace again and read its live tree.
    const restoredFrom = new Map<string, ProvisionResult>();
    let cursor = 0;
    await Promise.all(
      Array.from({ length: CALLERS }, async () => {
        while (cursor < ids.length) {
          const workspaceId = ids[cursor++]!;
          const { result } = await client.provision({ workspaceId }, { wait: true, timeoutMs: 120_000 });
          restoredFrom.set(workspaceId, result as ProvisionResult);
        }
      }),
    );
    const lost: string[] = [];
    for (const workspaceId of ids) {
      const placed = restoredFrom.get(workspaceId)!;
      expect(placed.hostId).not.toBe(DEAD);
      const content = await providers.get(placed.hostId)!.readFile(placed.handle, 'owner.txt');
      if (content?.toString() !== workspaceId) lost.push(workspaceId);
    }
    expect(lost).toEqual([]);
    // The dead host's workspaces came back from the archive, on a surviving host.
    for (const workspaceId of heldByDeadAtKill) expect(restoredFrom.get(workspaceId)!.outcome).toBe('restored');

    // None doubled: every sandbox the address store does not name is an older generation, fenced
    // (G2; left by a provisioner that died between create and publish), and each host's janitor
    // destroys it: the surviving hosts converge on one sandbox per workspace, the addressed one.
    const survivors = HOSTS.filter((h) => h !== DEAD);
    const sandboxesByWorkspace = async () => {
      const found = new Map<string, { handle: string; generation: number }[]>();
      for (const hostId of survivors) {
        for (const sandbox of await providers.get(hostId)!.list()) found.set(sandbox.workspaceId, [...(found.get(sandbox.workspaceId) ?? []), { handle: sandbox.handle, generation: sandbox.generation }]);
      }
      return found;
    };
    const first = await sandboxesByWorkspace();
    let extras = 0;
    for (const workspaceId of ids) {
      const addressed = restoredFrom.get(workspaceId)!;
      const others = (first.get(workspaceId) ?? []).filter((s) => s.handle !== addressed.handle);
      for (const other of others) expect(other.generation, `${workspaceId}: ${other.handle} beside ${addressed.handle}`).toBeLessThan(addressed.generation);
      extras += others.length;
    }
    await waitFor(
      `every workspace down to its one addressed sandbox (${extras} fenced leftovers at first)`,
      async () => {
        const found = await sandboxesByWorkspace();
        return ids.every((ws) => JSON.stringify((found.get(ws) ?? []).map((s) => s.handle)) === JSON.stringify([restoredFrom.get(ws)!.handle])) ? true : undefined;
      },
      180_000,
      500,
    );
    // Every surviving host took a share of the load.
    for (const hostId of survivors) expect([...restoredFrom.values()].some((r) => r.hostId === hostId)).toBe(true);
  });
});
