// Orphan GC on Vercel (real SDK against the loopback stand-in): it destroys only sandboxes it can
// prove abandoned, never a live bake's seed or a sandbox caught between create and publish.
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bakeBase } from '../../src/bake/bake-base.js';
import { BaseManifest } from '../../src/queues/base-manifest.js';
import { runGc } from '../../src/gc/run-gc.js';
import { createLogger } from '../../src/logger.js';
import { provisionWorkspace } from '../../src/provision/provision-workspace.js';
import { parsePayload } from '../../src/queues/payload.js';
import { createServices } from '../../src/app/services.js';
import { addCleanup } from '../helpers/cleanup.js';
import { delegatingProvider } from '../helpers/delegating-provider.js';
import { deferred } from '../helpers/fleet-harness.js';
import { testConnection } from '../helpers/fleet-env.js';
import { createVercelHarness } from '../helpers/vercel-harness.js';

const HOUR = 3_600_000;
const signal = () => AbortSignal.timeout(30_000);

describe('orphan GC (Vercel stand-in)', () => {
  it('19.1: orphan GC never destroys a live bake seed or a sandbox between create and publish; it destroys a proven-old orphan', async () => {
    const { standin, h } = await createVercelHarness({ FLEET_PROVISION_DEADLINE_MS: '60000' });
    const vercel = h.services.providers.get('vercel');

    // A bake whose setup waits (inside the seed sandbox) until the test lets it finish.
    const manifest = parsePayload('manifest', BaseManifest, {
      schemaVersion: 1,
      name: 'slow-base',
      runtime: 'node22',
      setup: ['while [ ! -f ../go ]; do sleep 0.05; done'],
    });
    const seedCreated = once(standin.events, 'create') as Promise<[{ sandboxName: string }]>;
    const bake = bakeBase(h.services, { manifest, activate: false, provider: 'vercel' }, h.ctx());
    const [{ sandboxName: seed }] = await seedCreated;
    await standin.nextRequest('runCommand');

    // A provision caught between the provider's create and the runtime record of its handle.
    const real = h.services.providers.get('vercel');
    const created = deferred<string>();
    const release = deferred();
    const paused = delegatingProvider(real, {
      create: async (request) => {
        const result = await real.create(request);
        created.resolve(result.handle);
        await release.promise;
        return result;
      },
    });
    const provisioner = createServices({ config: h.config, redis: testConnection(h.config), logger: createLogger({ level: 'silent' }), extraProviders: [paused] });
    addCleanup(() => provisioner.close());
    const provision = provisionWorkspace(provisioner, { workspaceId: 'in-flight', provider: 'vercel', lane: 'default' }, h.ctx());
    const inFlight = await created.promise;

    // Two sandboxes nobody creates or publishes: one an hour old, one just made.
    const { handle: oldOrphan } = await vercel.create({ workspaceId: 'lost', generation: 1, source: { type: 'empty' }, signal: signal() });
    const { handle: youngOrphan } = await vercel.create({ workspaceId: 'fresh', generation: 1, source: { type: 'empty' }, signal: signal() });
    // Everything but the young orphan looks an hour old to the provider.
    for (const name of [seed, inFlight, oldOrphan]) standin.backdate(name, HOUR);

    const dry = await runGc(h.services, { kind: 'orphans', dryRun: true, limit: 100 }, signal());
    const real1 = await runGc(h.services, { kind: 'orphans', dryRun: false, limit: 100 }, signal());
    expect(dry.items.map((i) => i.id)).toEqual([oldOrphan]);
    expect(real1.items.map((i) => i.id)).toEqual([oldOrphan]);
    expect((standin.sandbox(oldOrphan) !== undefined)).toBe(false);
    for (const kept of [seed, inFlight, youngOrphan]) expect((standin.sandbox(kept) !== undefined), kept).toBe(true);

    // Both creators finish normally.
    release.resolve();
    expect(await provision).toMatchObject({ outcome: 'created-empty', handle: inFlight });
    const seedDir = standin.sandboxDir(seed);
    await mkdir(seedDir, { recursive: true });
    await writeFile(path.join(seedDir, 'go'), '');
    expect(await bake).toMatchObject({ provider: 'vercel', reused: false });
    // The finished bake destroyed its own seed; the published sandbox is no orphan.
    expect((standin.sandbox(seed) !== undefined)).toBe(false);
    expect((await runGc(h.services, { kind: 'orphans', dryRun: true, limit: 100 }, signal())).items).toEqual([]);
  });

  it('destroys an orphan only under its workspace\'s provisioning lock: while a provisioner holds it, the orphan waits', async () => {
    const { standin, h } = await createVercelHarness({ FLEET_PROVISION_DEADLINE_MS: '60000' });
    const vercel = h.services.providers.get('vercel');
    const { handle } = await vercel.create({ workspaceId: 'held', generation: 1, source: { type: 'empty' }, signal: signal() });
    standin.backdate(handle, HOUR);
    const held = deferred();
    const holding = deferred();
    const provisioner = h.services.singleFlight.using('provision:held', async () => {
      holding.resolve();
      await held.promise;
    });
    await holding.promise;
    const blocked = await runGc(h.services, { kind: 'orphans', dryRun: false, limit: 100 }, signal());
    expect(blocked.items).toEqual([]);
    expect(standin.sandbox(handle)).toBeDefined();
    held.resolve();
    await provisioner;
    const freed = await runGc(h.services, { kind: 'orphans', dryRun: false, limit: 100 }, signal());
    expect(freed.items.map((i) => i.id)).toEqual([handle]);
    expect(standin.sandbox(handle)).toBeUndefined();
  });
});
