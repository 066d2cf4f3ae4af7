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
    await cluster.waitUntilHealthy(60_000);
    return cluster;
  }

  /** Resolves once every node reports the cluster `ok` with every slot assigned. */
  async waitUntilHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const states = await Promise.all(this.nodes.filter((node) => node.child && node.child.exitCode === null && node.child.signalCode === null).map((node) => this.info(node)));
      if (states.every((info) => /cluster_state:ok/.test(info) && /cluster_slots_assigned:16384/.test(info))) return;
      if (Date.now() > deadline) throw new Error(`redis cluster not healthy within ${timeoutMs} ms: ${states.map((s) => /cluster_state:\w+/.exec(s)?.[0]).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
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
      const target = this.connect(this.nodes.find((n) => n.port === portOf(replica))!);
      try {
        await target.cluster('FAILOVER');
        const deadline = Date.now() + 30_000;
        while (((await target.role()) as unknown[])[0] !== 'master') {
          if (Date.now() > deadline) throw new Error('failover did not complete within 30 s');
          await new Promise((resolve) => setTimeout(resolve, 50));
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

  private async info(node: RedisServer): Promise<string> {
    const redis = new Redis(node.port, '127.0.0.1', { password: this.password, lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1_000, commandTimeout: 1_000, retryStrategy: () => null });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      return (await redis.cluster('INFO')) as string;
    } catch {
      return '';
    } finally {
      redis.disconnect();
    }
  }
}
