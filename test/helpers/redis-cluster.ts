// A real Redis Cluster for tests: 3 masters and 3 replicas (`redis-server --cluster-enabled yes`,
// joined by `redis-cli --cluster create`), each node on loopback with one shared password,
// stopped when the test finishes.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { addCleanup } from './cleanup.js';
import { freePort, newRedisPassword, RedisExitedError, RedisServer } from './redis-server.js';

const run = promisify(execFile);

export class RedisCluster {
  private constructor(
    readonly nodes: readonly RedisServer[],
    readonly password: string,
  ) {}

  /** `host:port,...` of every node (FLEET_REDIS_CLUSTER_NODES). */
  get seedNodes(): string {
    return this.nodes.map((node) => `127.0.0.1:${node.port}`).join(',');
  }

  /** The environment that points the fleet at this cluster. */
  get env(): Record<string, string> {
    return { FLEET_REDIS_CLUSTER_NODES: this.seedNodes, FLEET_REDIS_PASSWORD: this.password };
  }

  /**
   * Starts the nodes under a new temporary directory; `register` receives their teardown (a
   * test's cleanups by default; a benchmark passes its releasers).
   */
  static async start(masters = 3, replicasPerMaster = 1, register: (teardown: () => Promise<void>) => void = addCleanup): Promise<RedisCluster> {
    const password = newRedisPassword();
    const root = await mkdtemp(path.join(tmpdir(), 'redis-cluster-'));
    const nodes: RedisServer[] = [];
    register(async () => {
      await Promise.all(nodes.map((node) => node.stop('SIGKILL')));
      await rm(root, { recursive: true, force: true });
    });
    // Ports are picked apart from one another; a node whose port another process took between
    // freePort and its bind exits, and is started again on new ports.
    const taken = new Set<number>();
    const pick = async (): Promise<number> => {
      for (;;) {
        const port = await freePort();
        if (!taken.has(port)) {
          taken.add(port);
          return port;
        }
      }
    };
    const startNode = async (dir: string): Promise<RedisServer> => {
      for (let attempt = 1; ; attempt++) {
        // The bus port is set explicitly: port + 10000 may be past 65535 for an ephemeral port.
        const busPort = await pick();
        const node = new RedisServer(await pick(), dir, false, ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000', '--cluster-port', String(busPort), '--masterauth', password], password);
        nodes.push(node);
        try {
          await node.start();
          return node;
        } catch (error) {
          await node.stop('SIGKILL');
          nodes.splice(nodes.indexOf(node), 1);
          if (!(error instanceof RedisExitedError) || attempt === 3) throw error;
          await rm(path.join(dir, 'nodes.conf'), { force: true });
        }
      }
    };
    const dirs: string[] = [];
    for (let i = 0; i < masters * (1 + replicasPerMaster); i++) {
      const dir = path.join(root, `node-${i}`);
      await mkdir(dir, { recursive: true });
      dirs.push(dir);
    }
    const started = await Promise.all(dirs.map((dir) => startNode(dir)));
    nodes.splice(0, nodes.length, ...started);
    await run('redis-cli', ['-a', password, '--no-auth-warning', '--cluster', 'create', ...nodes.map((node) => `127.0.0.1:${node.port}`), '--cluster-replicas', String(replicasPerMaster), '--cluster-yes'], { timeout: 60_000 });
    const cluster = new RedisCluster(nodes, password);
    await cluster.waitUntilHealthy(60_000, masters * replicasPerMaster);
    return cluster;
  }

  /**
   * Resolves once every node reports the cluster `ok` with every slot assigned and, with
   * `replicas`, once every live node sees that many replicas and each of them has its replication
   * link up. `cluster create` returns before the replicas' roles have spread by gossip: right after
   * it a node may still list a replica as a master with no slots, and a manual failover needs a
   * replica whose link is up.
   */
  async waitUntilHealthy(timeoutMs: number, replicas = 0): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const live = this.nodes.filter((node) => node.child && node.child.exitCode === null && node.child.signalCode === null);
      const states = await Promise.all(live.map((node) => this.ask(node, ['CLUSTER', 'INFO'])));
      const clusterOk = states.every((info) => /cluster_state:ok/.test(info) && /cluster_slots_assigned:16384/.test(info));
      const replicated = replicas === 0 || (clusterOk && (await this.replicated(live, replicas)));
      if (clusterOk && replicated) return;
      if (Date.now() > deadline) throw new Error(`redis cluster not healthy within ${timeoutMs} ms: ${states.map((s) => /cluster_state:\w+/.exec(s)?.[0]).join(', ')}${clusterOk ? `; fewer than ${replicas} replicas with their link up` : ''}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private async replicated(live: readonly RedisServer[], replicas: number): Promise<boolean> {
    const views = await Promise.all(live.map((node) => this.ask(node, ['CLUSTER', 'NODES'])));
    const replicaIds = views.map((view) => view.split('\n').filter((line) => line.split(' ')[2]?.includes('slave')).map((line) => line.split(' ')[0]));
    if (!replicaIds.every((ids) => ids.length === replicas)) return false;
    const links = await Promise.all(live.map((node) => this.ask(node, ['INFO', 'replication'])));
    return links.filter((info) => /role:slave/.test(info) && /master_link_status:up/.test(info)).length === replicas;
  }

  /**
   * Fails the master that holds `key`'s slot over to its replica (`CLUSTER FAILOVER` on the
   * replica, as an operator does) and resolves once the replica is master and the cluster is ok.
   */
  async failoverSlotOf(key: string): Promise<{ from: number; to: number }> {
    const any = this.connect(this.nodes[0]!);
    try {
      const slot = Number(await any.cluster('KEYSLOT', key));
      const lines = String(await any.cluster('NODES')).trim().split('\n').map((line) => line.split(' '));
      const master = lines.find((f) => f[2]!.includes('master') && f.slice(8).some((range) => {
        const [a, b = a] = range.split('-').map(Number);
        return slot >= a! && slot <= b!;
      }))!;
      const replica = lines.find((f) => f[3] === master[0])!;
      const portOf = (f: string[]) => Number(f[1]!.split('@')[0]!.split(':')[1]);
      const replicaNode = this.nodes.find((n) => n.port === portOf(replica))!;
      const target = this.connect(replicaNode);
      try {
        // Redis aborts a manual failover that has not completed within 5 s (the master pausing
        // its clients, the replica catching up and the masters' votes all have to fit), and the
        // replica then stays a replica; on a loaded machine that happens. An operator asks
        // again, and so does this: up to four times, 12 s each (never FORCE, which could drop
        // writes the old master acknowledged and make a lost write look like a fleet bug).
        const promoted = async (withinMs: number): Promise<boolean> => {
          const deadline = Date.now() + withinMs;
          while (((await target.role()) as unknown[])[0] !== 'master') {
            if (Date.now() > deadline) return false;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          return true;
        };
        for (let attempt = 1; ; attempt++) {
          // A failover that completed just after the last look answers with an error (the node is a master now).
          await target.cluster('FAILOVER').catch(async (error: unknown) => {
            if (!(await promoted(0))) throw error;
          });
          if (await promoted(12_000)) break;
          if (attempt === 4) {
            const masterNode = this.nodes.find((n) => n.port === portOf(master))!;
            throw new Error(`failover did not complete in ${attempt} attempts of 12 s\nreplica ${replicaNode.port}:\n${replicaNode.lastLog()}\nmaster ${masterNode.port}:\n${masterNode.lastLog()}`);
          }
        }
      } finally {
        target.disconnect();
      }
      await this.waitUntilHealthy(30_000);
      return { from: portOf(master), to: portOf(replica) };
    } finally {
      any.disconnect();
    }
  }

  private connect(node: RedisServer): Redis {
    const redis = new Redis(node.port, '127.0.0.1', { password: this.password, maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: 5_000 });
    redis.on('error', () => undefined);
    return redis;
  }

  /** One command's answer from one node, or '' if the node does not answer within a second. */
  private async ask(node: RedisServer, command: readonly [string, ...string[]]): Promise<string> {
    const redis = new Redis(node.port, '127.0.0.1', { password: this.password, lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1_000, commandTimeout: 1_000, retryStrategy: () => null });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      return String(await redis.call(...command));
    } catch {
      return '';
    } finally {
      redis.disconnect();
    }
  }
}
