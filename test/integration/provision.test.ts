// Restore priority, busy vs gone, and the reset escape hatch, on real Redis + real directories.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { delegatingProvider } from '../helpers/delegating-provider.js';
import { ProviderBusyError, ProviderGoneError } from '../../src/providers/provider-errors.js';
import { provisionWorkspace } from '../../src/provision/provision-workspace.js';
import { resetWorkspace } from '../../src/provision/reset-workspace.js';
import { createServices } from '../../src/app/services.js';
import { createLogger } from '../../src/logger.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testConnection } from '../helpers/fleet-env.js';
import { createHarness, rejectsWith, type Harness } from '../helpers/workspace-harness.js';

// Registers a ready local base snapshot holding `files` as the active base of lane `default`.
async function activeBase(h: Harness, files: Record<string, string>, id = 'base-1') {
  const tree = path.join(h.config.paths.snapshotRoot, id, 'tree');
  await mkdir(tree, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(tree, rel)), { recursive: true });
    await writeFile(path.join(tree, rel), content);
  }
  await h.services.bases.register({ provider: 'local', snapshotId: id, version: `base-${id}`, manifestHash: id, name: 'base', runtime: 'node22', lane: 'default', status: 'ready', sourceSandboxId: null, error: null, createdAt: Date.now(), readyAt: Date.now(), expiresAt: null });
  await h.services.bases.activate(id);
}

const signal = () => AbortSignal.timeout(10_000);

describe('restore priority', () => {
  it('created-empty, then reused, then resumed after a stop', async () => {
    const h = await createHarness();
    const first = await h.provision('ws');
    expect(first).toMatchObject({ outcome: 'created-empty', generation: 1, source: null, hostId: h.config.hostId });
    const again = await h.provision('ws');
    expect(again).toMatchObject({ outcome: 'reused', generation: 1, handle: first.handle });
    await h.services.providers.get('local').stop(first.handle, signal());
    expect(await h.provision('ws')).toMatchObject({ outcome: 'resumed', generation: 1, handle: first.handle });
  });

  it('restored from the attached revision with generation + 1 when the sandbox is gone', async () => {
    const h = await createHarness();
    const first = await h.provision('ws');
    await h.write('ws', { 'notes.md': 'keep me' });
    const persisted = await h.persist('ws');
    await h.services.providers.get('local').destroy(first.handle, signal());
    const restored = await h.provision('ws');
    expect(restored).toMatchObject({ outcome: 'restored', source: persisted.revision, generation: 2 });
    expect(await readFile(path.join(h.live('ws'), 'notes.md'), 'utf8')).toBe('keep me');
    expect((await h.services.runtime.get('ws'))?.state).toBe('ready');
  });

  it('restored-native from a provider snapshot when there is no archive revision', async () => {
    const h = await createHarness();
    const first = await h.provision('ws');
    await h.write('ws', { 'native.txt': 'from the snapshot' });
    const local = h.services.providers.get('local');
    const { snapshotId } = await local.snapshot(first.handle, { expirationMs: 0, signal: signal() });
    const native = await h.services.checkpoints.record({ workspaceId: 'ws', generation: 1, kind: 'provider_native', workspaceRevision: snapshotId });
    await h.services.checkpoints.attach('ws', native.id, 1);
    await local.destroy(first.handle, signal());
    const restored = await h.provision('ws');
    expect(restored).toMatchObject({ outcome: 'restored-native', source: snapshotId, generation: 2 });
    expect(await readFile(path.join(h.live('ws'), 'native.txt'), 'utf8')).toBe('from the snapshot');
  });

  it('created-from-base only for a workspace that never had state; activation affects only new workspaces', async () => {
    const h = await createHarness();
    await activeBase(h, { 'README.md': 'base v1' }, 'base-1');
    const fresh = await h.provision('new-ws');
    expect(fresh).toMatchObject({ outcome: 'created-from-base', source: 'base-1' });
    expect(await readFile(path.join(h.live('new-ws'), 'README.md'), 'utf8')).toBe('base v1');
    expect((await h.services.runtime.get('new-ws'))?.baseSnapshotId).toBe('base-1');
    expect(await h.services.bases.referencedBy('base-1')).toEqual(['new-ws']);
    await h.write('new-ws', { 'work.txt': 'mine' });
    await h.persist('new-ws');

    await activeBase(h, { 'README.md': 'base v2' }, 'base-2');
    // The existing workspace is untouched: its runtime keeps base-1 provenance and its files.
    expect((await h.services.runtime.get('new-ws'))?.baseSnapshotId).toBe('base-1');
    const address = (await h.services.addresses.get('new-ws'))!;
    await h.services.providers.get('local').destroy(address.handle, signal());
    const restored = await h.provision('new-ws');
    expect(restored.outcome).toBe('restored');
    expect(await readFile(path.join(h.live('new-ws'), 'README.md'), 'utf8')).toBe('base v1');
    // A new workspace gets the new base; rollback of the active pointer brings back base-1.
    expect((await h.provision('other-ws')).source).toBe('base-2');
    expect(await h.services.bases.rollback('default', 'local')).toEqual({ from: 'base-2', to: 'base-1' });
    expect((await h.provision('third-ws')).source).toBe('base-1');
  });

  it('a known workspace that cannot be restored is a WorkspaceConflict, never the base; reset starts it over', async () => {
    const h = await createHarness();
    await activeBase(h, { 'README.md': 'base' });
    const first = await h.provision('ws');
    await h.write('ws', { 'precious.txt': 'data' });
    await h.persist('ws');
    await h.services.providers.get('local').destroy(first.handle, signal());
    // The archive is lost (e.g. a wrong volume mounted).
    await rm(h.services.archive.paths('ws').dir, { recursive: true });
    await rejectsWith(h.provision('ws'), 'WorkspaceConflict');
    expect(await h.services.addresses.get('ws')).toMatchObject({ handle: first.handle });
    const reset = await resetWorkspace(h.services, 'ws', signal());
    expect(reset.generation).toBeGreaterThan(first.generation);
    const fresh = await h.provision('ws');
    expect(fresh.outcome).toBe('created-from-base');
    expect(fresh.generation).toBeGreaterThan(reset.generation);
  });

  it('19.8: a workspace with a live address but no revision yet is a conflict when its sandbox dies, never the base', async () => {
    const h = await createHarness();
    await activeBase(h, { 'README.md': 'base' });
    const first = await h.provision('ws');
    expect(first.outcome).toBe('created-from-base');
    // The agent works, but no persist has run yet when the sandbox dies.
    await h.write('ws', { 'unsaved.txt': 'an hour of work' });
    await h.services.providers.get('local').destroy(first.handle, signal());
    const error = await rejectsWith(h.provision('ws'), 'WorkspaceConflict');
    expect(error.message).toContain('fleet workspace reset ws --confirm');
    // Nothing was recreated: the generation did not move, no new sandbox exists.
    expect(await h.services.addresses.generation('ws')).toBe(first.generation);
    expect((await h.services.providers.get('local').list(signal())).map((s) => s.workspaceId)).not.toContain('ws');
  });

  it('takes generation max(store, archive) + 1 when Redis lost recent writes', async () => {
    const h = await createHarness();
    const first = await h.provision('ws');
    await h.write('ws', { 'a.txt': 'a' });
    await h.persist('ws');
    await h.services.providers.get('local').destroy(first.handle, signal());
    for (let i = 0; i < 3; i++) {
      const address = (await h.services.addresses.get('ws'))!;
      await h.services.providers.get('local').destroy(address.handle, signal());
      await h.provision('ws');
      await h.write('ws', { 'a.txt': `a${i}` });
      await h.persist('ws');
    }
    const highest = (await h.services.addresses.get('ws'))!.generation;
    // Simulate a failover that forgot the counter and the address.
    await h.services.redis.del(h.services.keys.generation('ws'), h.services.keys.address('ws'));
    const address = await h.provision('ws');
    expect(address.generation).toBe(highest + 1);
  });
});

describe('busy vs gone', () => {
  // A local provider whose `get` fails in a chosen way.
  function flakyServices(h: Harness, failure: 'busy' | 'gone') {
    const flaky = delegatingProvider(h.services.providers.get('local'), {
      get: async () => {
        throw failure === 'busy' ? new ProviderBusyError('local', 'get', 'timeout') : new ProviderGoneError('local', 'get', 'connection refused');
      },
    });
    const services = createServices({ config: h.config, redis: testConnection(h.config), logger: createLogger({ level: 'silent' }), extraProviders: [flaky] });
    addCleanup(() => services.close());
    return services;
  }

  it('busy: the provision fails retryably and never rebuilds or writes around it', async () => {
    const h = await createHarness();
    const first = await h.provision('ws');
    const services = flakyServices(h, 'busy');
    const error = await rejectsWith(provisionWorkspace(services, { workspaceId: 'ws', provider: 'local', lane: 'default' }, h.ctx()), 'ProviderBusy');
    expect((error as unknown as { retryable: boolean }).retryable).toBe(true);
    expect(await h.services.addresses.get('ws')).toMatchObject({ handle: first.handle, generation: 1 });
    expect(await h.services.addresses.generation('ws')).toBe(1);
  });

  it('gone: the provision rebuilds with generation + 1', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'a' });
    await h.persist('ws');
    const services = flakyServices(h, 'gone');
    const rebuilt = await provisionWorkspace(services, { workspaceId: 'ws', provider: 'local', lane: 'default' }, h.ctx());
    expect(rebuilt).toMatchObject({ outcome: 'restored', generation: 2 });
  });
});
