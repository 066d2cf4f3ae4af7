// Placement across hosts: new local sandboxes go to the least-loaded live sandbox host, provider
// operations for another host travel through its hostops queue, and a host that stops
// heartbeating is treated as gone (its workspace is rebuilt elsewhere from the archive).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { livePaths } from '../../src/providers/local/live-paths.js';
import { SANDBOX_WORKDIR } from '../../src/sandbox/sandbox-command.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { tempDir } from '../helpers/fleet-env.js';
import { createHarness } from '../helpers/workspace-harness.js';

describe('placement across hosts', () => {
  it('places on the least-loaded live host, works through its hostops queue, and rebuilds when it dies', async () => {
    const h = await createHarness({ FLEET_HOST_ID: 'host-a' });
    const hostBRoot = await tempDir('host-b-live');
    const hostB = loadConfig({ ...h.env, FLEET_HOST_ID: 'host-b', FLEET_LIVE_ROOT: hostBRoot });
    const hostBProcess = await testWorkers(hostB, ['persist']);
    // host-a holds two sandboxes against a capacity of 2; host-b none of 100.
    await h.services.hosts.reportSandboxHost('host-a', { sandboxes: 2, capacity: 2 });

    const placed = await h.provision('ws');
    expect(placed).toMatchObject({ outcome: 'created-empty', hostId: 'host-b', handle: 'local:host-b:ws:g1' });
    expect((await h.services.addresses.get('ws'))?.hostId).toBe('host-b');

    // Operations from host-a reach the sandbox on host-b.
    const remote = h.services.providerFor((await h.services.addresses.get('ws'))!);
    const ran = await remote.exec(placed.handle, { cmd: ['sh', '-c', 'echo "made on b" > note.txt && pwd'], timeoutMs: 10_000, signal: AbortSignal.timeout(20_000) });
    expect(ran.exitCode).toBe(0);
    // The command runs in host-b's sandbox, where its tree is /workspace.
    expect(ran.stdout.trim()).toBe(SANDBOX_WORKDIR);
    expect(await readFile(path.join(livePaths(hostBRoot, 'ws').root, 'note.txt'), 'utf8')).toBe('made on b\n');
    // Every answer is host-b's own, validated by its result schema (never a stand-in such as an empty list).
    expect(await remote.readFile(placed.handle, 'note.txt', AbortSignal.timeout(20_000))).toEqual(Buffer.from('made on b\n'));
    expect((await remote.list(AbortSignal.timeout(20_000))).map((s) => s.handle)).toEqual([placed.handle]);
    expect(await remote.snapshotStatus('no-such-base', AbortSignal.timeout(20_000))).toBe('missing');
    expect(await h.provision('ws')).toMatchObject({ outcome: 'reused', hostId: 'host-b' });

    // Persist runs on host-b's persist queue.
    const { result } = await h.services.client.persist({ workspaceId: 'ws', generation: placed.generation, delete: true, reason: 'turn-end' }, { wait: true, timeoutMs: 30_000 });
    expect(result?.files).toBe(1);

    // host-b stops (its heartbeat with it, so no beat can land after the backdate below) and its
    // last beat is backdated instead of waited out: its workspace is rebuilt on host-a, without host-b.
    await hostBProcess.close();
    await h.services.redis.zadd(h.services.keys.sandboxHosts(), Date.now() - 3_600_000, 'host-b');
    const rebuilt = await h.provision('ws');
    expect(rebuilt).toMatchObject({ outcome: 'restored', hostId: 'host-a', generation: 2 });
    expect(await readFile(path.join(h.live('ws'), 'note.txt'), 'utf8')).toBe('made on b\n');
  });
});
