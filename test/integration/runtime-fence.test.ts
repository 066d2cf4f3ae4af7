// Runtime records change only by fenced transitions (issue 19.4): a provisioner that lost its
// lock and was superseded never writes over the newer incarnation's record.
import { describe, expect, it } from 'vitest';
import { provisionWorkspace } from '../../src/provision/provision-workspace.js';
import { createServices } from '../../src/app/services.js';
import { createLogger } from '../../src/logger.js';
import { runGc } from '../../src/gc/run-gc.js';
import { ProviderPermanentError } from '../../src/providers/provider-errors.js';
import { addCleanup } from '../helpers/cleanup.js';
import { deferred } from '../helpers/fleet-harness.js';
import { delegatingProvider } from '../helpers/delegating-provider.js';
import { testConnection } from '../helpers/fleet-env.js';
import { createHarness } from '../helpers/workspace-harness.js';

describe('runtime transitions are fenced', () => {
  it('19.4: a stale provisioner never writes error over a newer ready', async () => {
    const h = await createHarness({ FLEET_IDLE_TTL_MS: '60000' });
    const real = h.services.providers.get('local');
    const entered = deferred();
    const release = deferred();
    // Provisioner A: its create of generation 1 hangs (a paused process) until the test lets it go.
    const paused = delegatingProvider(real, {
      create: async (request) => {
        const created = await real.create(request);
        entered.resolve();
        await release.promise;
        return created;
      },
    });
    const servicesA = createServices({ config: h.config, redis: testConnection(h.config), logger: createLogger({ level: 'silent' }), extraProviders: [paused] });
    addCleanup(() => servicesA.close());
    const a = provisionWorkspace(servicesA, { workspaceId: 'ws', provider: 'local', lane: 'default' }, h.ctx()).then(
      (result) => ({ result, error: null }),
      (error: unknown) => ({ result: null, error: error as { code?: string } }),
    );
    await entered.promise;
    // A's lock lapses (as for a process paused past its TTL); provisioner B takes over.
    await h.services.redis.del(h.services.keys.lock('provision:ws'));
    const b = await h.provision('ws');
    expect(b.generation).toBe(2);
    expect(await h.services.runtime.get('ws')).toMatchObject({ state: 'ready', generation: 2, handle: b.handle });

    release.resolve();
    const outcome = await a;
    expect(outcome.error?.code).toBe('ProvisionSuperseded');
    // B's record is untouched: still ready, generation 2, B's handle, no error.
    expect(await h.services.runtime.get('ws')).toMatchObject({ state: 'ready', generation: 2, handle: b.handle, error: null });
    // And the idle reaper still sees it (it only reaps ready workspaces).
    await h.services.redis.zadd(h.services.keys.workspaces(h.services.keys.bucket('ws')), Date.now() - 120_000, 'ws');
    const idle = await runGc(h.services, { kind: 'idle', dryRun: true, limit: 10 }, AbortSignal.timeout(10_000));
    expect(idle.items.map((item) => item.id)).toEqual(['ws']);
  });

  it('19.4: every transition checks the allowed previous state and the generation in one step', async () => {
    const h = await createHarness();
    const { runtime, addresses } = h.services;
    await addresses.bumpGeneration('w', 0);
    expect(await runtime.transition('w', 'ready', 1)).toMatchObject({ applied: false, state: 'none' });
    expect(await runtime.transition('w', 'begin', 1, { provider: 'local' })).toEqual({ applied: true });
    expect(await runtime.transition('w', 'stop', 1)).toMatchObject({ applied: false, state: 'provisioning' });
    expect(await runtime.transition('w', 'ready', 1, { outcome: 'created-empty' })).toEqual({ applied: true });
    // A begin of the same generation again, or of an old one, is refused.
    expect(await runtime.transition('w', 'begin', 1)).toMatchObject({ applied: false, state: 'ready', generation: 1 });
    // A newer generation exists in the counter: transitions of generation 1 that need it are refused.
    await addresses.bumpGeneration('w', 0);
    expect(await runtime.transition('w', 'handle', 1, { handle: 'h' })).toMatchObject({ applied: false, counter: 2 });
    expect(await runtime.transition('w', 'begin', 2, { provider: 'local' })).toEqual({ applied: true });
    // The published generation 1 is not confirmed over generation 2 while that provisioner is at work.
    expect(await runtime.transition('w', 'confirm', 1)).toMatchObject({ applied: false, state: 'provisioning', generation: 2 });
    expect(await runtime.transition('w', 'fail', 1, { error: 'late' })).toMatchObject({ applied: false, state: 'provisioning', generation: 2 });
    expect(await runtime.transition('w', 'fail', 2, { error: 'Boom: x' })).toEqual({ applied: true });
    expect(await runtime.get('w')).toMatchObject({ state: 'error', generation: 2, error: 'Boom: x', provider: 'local', outcome: 'created-empty' });
    // Generation 2 failed without an incarnation: the published generation 1 is confirmed again.
    expect(await runtime.transition('w', 'confirm', 1)).toEqual({ applied: true });
    expect(await runtime.get('w')).toMatchObject({ state: 'ready', generation: 1 });
    expect((await runtime.get('w'))!.createdAt).toBeGreaterThan(0);
  });

  it('19.4: a failed newer attempt never blocks reusing the published incarnation (no livelock after an outage)', async () => {
    const h = await createHarness();
    const first = await h.provision('ws');
    await h.write('ws', { 'a.txt': 'a' });
    await h.persist('ws');
    const real = h.services.providers.get('local');
    // An outage: the probe says gone, the rebuild's create fails.
    const outage = delegatingProvider(real, {
      get: async () => null,
      create: async () => {
        throw new ProviderPermanentError('local', 'create', 'provider unreachable');
      },
    });
    const during = createServices({ config: h.config, redis: testConnection(h.config), logger: createLogger({ level: 'silent' }), extraProviders: [outage] });
    addCleanup(() => during.close());
    const failed = await provisionWorkspace(during, { workspaceId: 'ws', provider: 'local', lane: 'default' }, h.ctx()).catch((e: { code?: string }) => e.code);
    expect(failed).toBe('ProviderPermanent');
    expect(await h.services.runtime.get('ws')).toMatchObject({ state: 'error', generation: 2 });
    // The outage is over: the published generation 1 is still there and is reused.
    expect(await h.provision('ws')).toMatchObject({ outcome: 'reused', generation: 1, handle: first.handle });
    expect(await h.services.runtime.get('ws')).toMatchObject({ state: 'ready', generation: 1, handle: first.handle });
  });
});
