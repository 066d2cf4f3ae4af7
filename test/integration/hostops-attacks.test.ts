// The hostops attacks of issue 12, each as it was reproduced on main, through the real hostops
// processor and a real LocalProvider over real directories: every one is refused with a
// permanent PayloadInvalid naming the field and the value, and nothing is touched. The local
// provider refuses the same ids on its own (defence in depth). Legitimate calls still pass.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { archivePaths } from '../../src/archive/archive-paths.js';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { livePaths } from '../../src/providers/local/live-paths.js';
import { BullmqHostOpsTransport } from '../../src/hostops/bullmq-hostops-transport.js';
import { RemoteLocalProvider } from '../../src/hostops/remote-local-provider.js';
import { createHarness } from '../helpers/workspace-harness.js';
import { BASE, VICTIM_REVISION, WS_REVISION, hostopsHost, rejection, type HostopsHost } from '../helpers/hostops-host.js';

const signal = () => AbortSignal.timeout(30_000);

// Expects a permanent PayloadInvalid whose message names `field` and the offending value.
function expectInvalid(error: unknown, field: string, value?: string): PayloadInvalidError {
  expect(error).toBeInstanceOf(PayloadInvalidError);
  const invalid = error as PayloadInvalidError;
  expect(invalid.retryable).toBe(false);
  expect(invalid.field).toBe(field);
  expect(invalid.message).toContain(`${field}:`);
  if (value !== undefined) {
    expect(invalid.issues[0]?.value).toBe(value);
    // Long values are shortened in the message, never left out.
    expect(invalid.message).toContain(JSON.stringify(value).slice(0, 60));
  }
  return invalid;
}

// Runs `attack`, then checks that the home and the sentinel are byte-identical before it reports
// how the refusals looked (damage is the first thing to see when a guard is missing).
async function untouched(h: HostopsHost, attack: () => Promise<void>): Promise<void> {
  const before = await h.trees();
  const failure = await attack().then(
    () => null,
    (error: unknown) => error,
  );
  expect(await h.trees()).toEqual(before);
  if (failure) throw failure;
}

describe('hostops attacks (issue 12, item 4)', () => {
  it("deleteSnapshot '..' leaves the snapshot root's parent (the fleet home: archive, live trees, Redis data) intact", async () => {
    const h = await hostopsHost();
    await untouched(h, async () => {
      expectInvalid(await rejection(h.run({ op: 'deleteSnapshot', args: { snapshotId: '..' } })), 'args.snapshotId', '..');
      expectInvalid(await rejection(h.run({ op: 'deleteSnapshot', args: { snapshotId: '.' } })), 'args.snapshotId', '.');
      expectInvalid(await rejection(h.run({ op: 'deleteSnapshot', args: { snapshotId: '../archive' } })), 'args.snapshotId', '../archive');
      // The provider refuses on its own too.
      expectInvalid(await rejection(h.local.deleteSnapshot('..')), 'snapshotId', '..');
      expectInvalid(await rejection(h.local.deleteSnapshot('.')), 'snapshotId', '.');
    });
    expect(await readFile(path.join(h.home, 'redis', 'appendonly.aof'), 'utf8')).toBe('fleet state');
  });

  it("create with workspaceId '../../x' writes nothing outside FLEET_LIVE_ROOT", async () => {
    const h = await hostopsHost();
    await untouched(h, async () => {
      const args = { workspaceId: '../../x', generation: 1, source: { type: 'empty' } };
      expectInvalid(await rejection(h.run({ op: 'create', args })), 'args.workspaceId', '../../x');
      expectInvalid(await rejection(h.local.create({ ...args, source: { type: 'empty' }, signal: signal() })), 'workspaceId', '../../x');
      for (const workspaceId of ['..', '.', 'a/b']) {
        expectInvalid(await rejection(h.local.create({ workspaceId, generation: 1, source: { type: 'empty' }, signal: signal() })), 'workspaceId', workspaceId);
      }
      // A snapshot source is one segment under the snapshot root, never a way out of it.
      const source = { type: 'base-snapshot', snapshotId: '../hosts' };
      expectInvalid(await rejection(h.run({ op: 'create', args: { workspaceId: 'ws2', generation: 1, source } })), 'args.source.snapshotId', '../hosts');
      expectInvalid(await rejection(h.local.create({ workspaceId: 'ws2', generation: 1, source: { type: 'base-snapshot', snapshotId: '..' }, signal: signal() })), 'source.snapshotId', '..');
    });
  });

  it('importTree refuses a source outside the handle\'s own committed revisions', async () => {
    const h = await hostopsHost();
    const { archiveRoot, snapshotRoot, liveRoot } = h.config.paths;
    const own = archivePaths(archiveRoot, 'ws');
    const outside = [
      h.sentinel,
      '/etc',
      archiveRoot,
      archivePaths(archiveRoot, 'victim').revision(VICTIM_REVISION),
      `${own.revs}/../../victim/revs/${VICTIM_REVISION}`,
      own.tmp(WS_REVISION),
      `${own.revision(WS_REVISION)}/`,
      path.join(snapshotRoot, BASE, 'tree'),
      livePaths(liveRoot, 'ws').root,
      path.relative(process.cwd(), own.revision(WS_REVISION)),
    ];
    const live = await h.liveTree();
    await untouched(h, async () => {
      for (const from of outside) {
        expectInvalid(await rejection(h.run({ op: 'importTree', handle: h.handle, args: { from } })), 'args.from', from);
      }
      expectInvalid(await rejection(h.local.importTree(h.handle, h.sentinel, signal())), 'from', h.sentinel);
      expectInvalid(await rejection(h.local.importTree(h.handle, archivePaths(archiveRoot, 'victim').revision(VICTIM_REVISION), signal())), 'from');
    });
    expect(await h.liveTree()).toEqual(live);
  });

  it('exec with a non-array cmd fails (it does not "complete" by running its first letter)', async () => {
    const h = await hostopsHost();
    await untouched(h, async () => {
      expectInvalid(await rejection(h.run({ op: 'exec', handle: h.handle, args: { cmd: 'touch pwned', timeoutMs: 5_000 } })), 'args.cmd', 'touch pwned');
      expectInvalid(await rejection(h.run({ op: 'exec', handle: h.handle, args: { cmd: { 0: 'touch', 1: 'pwned' }, timeoutMs: 5_000 } })), 'args.cmd');
      expectInvalid(await rejection(h.run({ op: 'exec', handle: h.handle, args: { cmd: [], timeoutMs: 5_000 } })), 'args.cmd');
      expectInvalid(await rejection(h.run({ op: 'exec', handle: h.handle, args: { cmd: ['touch', 'pwned'], cwd: '../../..', timeoutMs: 5_000 } })), 'args.cwd', '../../..');
    });
  });

  it("a handle of another host or another shape is refused before the provider is asked", async () => {
    const h = await hostopsHost();
    await untouched(h, async () => {
      expectInvalid(await rejection(h.run({ op: 'destroy', handle: 'local:other-host:ws:g1' })), 'handle', 'local:other-host:ws:g1');
      expectInvalid(await rejection(h.run({ op: 'destroy', handle: 'local:local:..:g1' })), 'handle', 'local:local:..:g1');
      expectInvalid(await rejection(h.run({ op: 'destroy' })), 'handle');
      expectInvalid(await rejection(h.run({ op: 'deleteSnapshot', handle: h.handle, args: { snapshotId: BASE } })), 'handle');
    });
  });

  it('the calling host refuses the same payloads before anything is enqueued', async () => {
    const h = await createHarness();
    const remote = new RemoteLocalProvider(new BullmqHostOpsTransport(h.services.client.pool, 5_000), 'host-b');
    expectInvalid(await rejection(remote.deleteSnapshot('..', signal())), 'args.snapshotId', '..');
    expectInvalid(await rejection(remote.create({ workspaceId: '../../x', generation: 1, source: { type: 'empty' }, signal: signal() })), 'args.workspaceId', '../../x');
    expectInvalid(await rejection(remote.exec('local:host-b:ws:g1', { cmd: 'touch pwned' as unknown as string[], timeoutMs: 1_000, signal: signal() })), 'args.cmd', 'touch pwned');
    expectInvalid(await rejection(remote.readFile('local:host-b:ws:g1', '../../etc/passwd', signal())), 'args.path', '../../etc/passwd');
    expect(await h.services.client.pool.queue('hostops@host-b').getJobCountByTypes('waiting', 'active', 'delayed', 'completed', 'failed')).toBe(0);
  });

  it('legitimate operations still pass through the processor', async () => {
    const h = await hostopsHost();
    const created = (await h.run({ op: 'create', args: { workspaceId: 'from-base', generation: 1, source: { type: 'base-snapshot', snapshotId: BASE } } })) as { handle: string };
    expect(created.handle).toBe('local:local:from-base:g1');
    expect(await readFile(path.join(livePaths(h.config.paths.liveRoot, 'from-base').root, 'base.txt'), 'utf8')).toBe('base');

    await h.run({ op: 'writeFiles', handle: h.handle, args: { files: [{ path: 'sub/a.txt', content: Buffer.from('written').toString('base64'), mode: 0o600 }] } });
    expect(await h.run({ op: 'readFile', handle: h.handle, args: { path: 'sub/a.txt' } })).toBe(Buffer.from('written').toString('base64'));
    const exec = (await h.run({ op: 'exec', handle: h.handle, args: { cmd: ['sh', '-c', 'echo "$GREETING" && cat a.txt'], cwd: 'sub', env: { GREETING: 'hi' }, timeoutMs: 10_000 } })) as { exitCode: number; stdout: string };
    expect(exec).toMatchObject({ exitCode: 0, stdout: 'hi\nwritten' });

    await h.run({ op: 'importTree', handle: h.handle, args: { from: archivePaths(h.config.paths.archiveRoot, 'ws').revision(WS_REVISION) } });
    expect(await h.liveTree()).toEqual({ 'restored.txt': Buffer.from('from the archive').toString('base64') });
    await h.run({ op: 'markReady', handle: h.handle, args: { marker: { generation: 1, source: WS_REVISION, readyAt: 1 } } });
    expect(await h.run({ op: 'readReady', handle: h.handle })).toEqual({ generation: 1, source: WS_REVISION, readyAt: 1 });
    const { snapshotId } = (await h.run({ op: 'snapshot', handle: h.handle, args: { expirationMs: 0 } })) as { snapshotId: string };
    expect(snapshotId).toMatch(/^snap-ws-g1-[0-9a-f]{8}$/);
    await h.run({ op: 'deleteSnapshot', args: { snapshotId } });
    await h.run({ op: 'stop', handle: h.handle });
    expect(await h.run({ op: 'get', handle: h.handle })).toMatchObject({ state: 'stopped' });
    await h.run({ op: 'resume', handle: h.handle });
    await h.run({ op: 'clearReady', handle: h.handle });
    await h.run({ op: 'destroy', handle: h.handle });
    expect(await h.run({ op: 'get', handle: h.handle })).toBeNull();
  });
});
