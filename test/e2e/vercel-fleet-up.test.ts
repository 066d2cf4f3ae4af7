// The embedded fleet with FLEET_PROVIDER=vercel, tried as a new user would (a running `fleet up`
// and the CLI, the real SDK against the loopback stand-in): persists of a Vercel workspace run,
// its queues are listed, a rebuild keeps the base's tools, an open turn keeps it awake; and a
// queue with waiting jobs that no worker serves is an alert in `fleet status` and /metrics.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { fleetKeys } from '../../src/keys.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir, testConnection, testEnv } from '../helpers/fleet-env.js';
import { killGroup, runFleet, startFleet, cliJson } from '../helpers/processes.js';
import { standinProvider } from '../helpers/vercel-standin/standin-provider.js';
import { VercelStandin } from '../helpers/vercel-standin/vercel-standin.js';
import { standinEnv } from '../helpers/vercel-standin/standin-env.js';

// `fleet up` with `env`; resolves with its web URL.
async function fleetUp(env: Record<string, string>) {
  const up = startFleet(['up'], env);
  await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
  return { up, web: /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]! };
}

describe('fleet up with FLEET_PROVIDER=vercel', () => {
  it('19.12: the embedded fleet persists a Vercel workspace (10 MB) and lists persist@vercel; 19.2: a rebuild through the CLI keeps the baked tool', { timeout: 180_000 }, async () => {
    const standin = await VercelStandin.start();
    addCleanup(() => standin.close());
    const env = await testEnv({
      ...standinEnv(standin),
      FLEET_HTTP_PORT: '0',
      FLEET_IDLE_TTL_MS: '60000',
      FLEET_GC_SCHEDULE: 'idle=off,orphans=off',
    });
    const fleet = (args: string[]) => runFleet(args, env);
    const json = async <T = Record<string, unknown>>(args: string[]): Promise<T> => {
      const result = await fleet([...args, '--json']);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      return cliJson(result.stdout) as T;
    };
    const { up } = await fleetUp(env);
    expect(up.stdout()).toMatch(/workers\s+.*persist@vercel.*checkpoint@vercel|workers\s+.*checkpoint@vercel.*persist@vercel/);

    const dir = await tempDir('vercel-base');
    const manifestFile = path.join(dir, 'base.json');
    await mkdir(dir, { recursive: true });
    await writeFile(
      manifestFile,
      JSON.stringify({
        schemaVersion: 1,
        name: 'tool-base',
        runtime: 'node22',
        setup: ["mkdir -p ../tools && printf '#!/bin/sh\\necho baked-tool-ok\\n' > ../tools/fleet-tool && chmod 755 ../tools/fleet-tool"],
        smoke: ['../tools/fleet-tool'],
      }),
    );
    const baked = await json<{ snapshotId: string; activated: boolean }>(['bake', manifestFile, '--activate', '--wait']);
    expect(baked.activated).toBe(true);
    const first = await json<{ handle: string; hostId: string; generation: number; outcome: string }>(['provision', 'agent', '--wait']);
    expect(first).toMatchObject({ hostId: 'vercel', outcome: 'created-from-base', generation: 1 });
    const work = await fleet(['exec', 'agent', '--', 'sh', '-c', 'head -c 10485760 /dev/urandom > big.bin && echo "agent work" > notes.txt && ../tools/fleet-tool']);
    expect(work).toMatchObject({ code: 0, stdout: 'baked-tool-ok\n' });

    const persisted = await json<{ queue: string; result: { revision: string; files: number; bytes: number } }>(['persist', 'agent', '--delete', '--reason', 'turn-end', '--wait', '--timeout', '60000']);
    expect(persisted.queue).toBe('persist@vercel');
    expect(persisted.result.bytes).toBeGreaterThanOrEqual(10 * 1024 * 1024);
    const status = await json<{ byQueue: Record<string, { completed: number }>; unservedQueues: unknown[] }>(['status']);
    expect(status.byQueue['persist@vercel']?.completed).toBeGreaterThanOrEqual(1);
    expect(Object.keys(status.byQueue)).toContain('checkpoint@vercel');
    expect(status.unservedQueues).toEqual([]);

    // The sandbox is lost at the provider; the next provision rebuilds it onto its base.
    await standinProvider(standin).destroy(first.handle, AbortSignal.timeout(30_000));
    const rebuilt = await json<{ outcome: string; generation: number; source: string }>(['provision', 'agent', '--wait']);
    expect(rebuilt).toMatchObject({ outcome: 'restored', generation: 2, source: persisted.result.revision });
    expect(await fleet(['exec', 'agent', '--', 'sh', '-c', '../tools/fleet-tool && cat notes.txt && wc -c < big.bin'])).toMatchObject({ code: 0, stdout: 'baked-tool-ok\nagent work\n10485760\n' });
    // Provenance survives the rebuild: the base, and the runtime it was baked with.
    expect((await json<{ runtime: { baseSnapshotId: string; runtime: string } }>(['workspace', 'show', 'agent'])).runtime).toMatchObject({ baseSnapshotId: baked.snapshotId, runtime: 'node22' });

    // 19.3 on Vercel: an open turn keeps the workspace awake however old its last activity.
    const config = loadConfig(env);
    const redis = testConnection(config);
    await json(['turn', 'open', 'agent', 'long-turn']);
    const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
    await redis.zadd(keys.workspaces(keys.bucket('agent')), Date.now() - 3_600_000, 'agent');
    expect((await json<{ results: { count: number }[] }>(['gc', '--kind', 'idle'])).results[0]!.count).toBe(0);
    killGroup(up.child, 'SIGTERM');
    expect((await up.exited).code).toBe(0);
  });

  it('19.12: a queue with waiting jobs and no worker is listed and raised as an alert (fleet status, /metrics)', { timeout: 120_000 }, async () => {
    const env = await testEnv({ FLEET_HTTP_PORT: '0' });
    const config = loadConfig(env);
    const { up, web } = await fleetUp(env);
    // A Vercel workspace's persist enqueued while no process serves Vercel (this fleet runs local only).
    const queue = new Queue('persist@vercel', { connection: testConnection(config), prefix: fleetKeys(config.redis.prefix, config.redis.keyLayout).queuePrefix('persist@vercel') });
    addCleanup(() => queue.close());
    await queue.add('persist', { workspaceId: 'on-vercel', generation: 1, delete: true, reason: 'turn-end' });

    const text = await runFleet(['status'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^persist@vercel\s+1\s/m);
    expect(text.stdout).toContain('ALERT: queue persist@vercel has 1 waiting job(s) and no live worker serves it (start one: fleet worker --queues persist --host vercel)');
    const status = cliJson((await runFleet(['status', '--json'], env)).stdout) as { unservedQueues: unknown[] };
    expect(status.unservedQueues).toEqual([{ queue: 'persist@vercel', waiting: 1, delayed: 0 }]);
    const metrics = await (await fetch(`${web}/metrics`)).text();
    expect(metrics).toContain('fleet_queue_unserved{queue="persist@vercel"} 1');
    expect(metrics).toContain('fleet_queue_jobs{queue="persist@vercel",state="waiting"} 1');

    // A worker for it clears the alert.
    const worker = startFleet(['worker', '--queues', 'persist', '--host', 'vercel'], env);
    await worker.waitForOutput('serving persist@vercel', 60_000);
    const served = cliJson((await runFleet(['status', '--json'], env)).stdout) as { unservedQueues: unknown[] };
    expect(served.unservedQueues).toEqual([]);
    killGroup(up.child, 'SIGTERM');
    expect((await up.exited).code).toBe(0);
  });
});
