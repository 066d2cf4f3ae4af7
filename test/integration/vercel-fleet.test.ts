// The fleet on the Vercel provider: the real @vercel/sandbox SDK against the loopback stand-in,
// through the provider-neutral bake, provision, persist and restore code.
import { describe, expect, it } from 'vitest';
import { bakeBase } from '../../src/bake/bake-base.js';
import { BaseManifest } from '../../src/queues/base-manifest.js';
import { provisionWorkspace } from '../../src/provision/provision-workspace.js';
import { parsePayload } from '../../src/queues/payload.js';
import { createVercelHarness } from '../helpers/vercel-harness.js';
import { archivedText } from '../helpers/archived.js';

describe('fleet on Vercel (stand-in)', () => {
  it('bakes a base, provisions from it, execs, persists into the archive, stops, resumes and restores', async () => {
    // Format 1 (this test reads revisions as directories and manifests); vercel-delta.test.ts covers format 2.
    const { h } = await createVercelHarness({ FLEET_ARCHIVE_FORMAT: '1' });
    const vercel = h.services.providers.get('vercel');
    const signal = () => AbortSignal.timeout(30_000);
    const manifest = parsePayload('manifest', BaseManifest, {
      schemaVersion: 1,
      name: 'vercel-base',
      runtime: 'node22',
      files: [{ path: 'README.md', content: 'base readme' }],
      setup: ['mkdir -p lib && echo base-lib > lib/base.txt'],
      smoke: ['test -f lib/base.txt'],
    });
    const baked = await bakeBase(h.services, { manifest, activate: true, provider: 'vercel' }, h.ctx());
    expect(baked).toMatchObject({ provider: 'vercel', activated: true, reused: false });
    expect(baked.snapshotId).toMatch(/^snap_/);

    const provision = () => provisionWorkspace(h.services, { workspaceId: 'vws', provider: 'vercel', lane: 'default' }, h.ctx());
    const first = await provision();
    expect(first).toMatchObject({ outcome: 'created-from-base', source: baked.snapshotId, provider: 'vercel', generation: 1 });
    const ran = await vercel.exec(first.handle, { cmd: ['sh', '-c', 'echo "agent work" > notes.txt && cat lib/base.txt'], timeoutMs: 20_000, signal: signal() });
    expect(ran).toMatchObject({ exitCode: 0, stdout: 'base-lib\n' });

    const persisted = await h.persist('vws');
    expect(persisted.unchanged).toBe(false);
    expect(await archivedText(h.services.archive, 'vws', 'notes.txt')).toBe('agent work\n');
    expect(await archivedText(h.services.archive, 'vws', 'README.md')).toBe('base readme');

    await vercel.stop(first.handle, signal());
    expect((await vercel.get(first.handle, signal()))?.state).toBe('stopped');
    expect(await provision()).toMatchObject({ outcome: 'resumed', handle: first.handle, generation: 1 });

    await vercel.destroy(first.handle, signal());
    const restored = await provision();
    expect(restored).toMatchObject({ outcome: 'restored', source: persisted.revision, generation: 2 });
    const cat = await vercel.exec(restored.handle, { cmd: ['cat', 'notes.txt'], timeoutMs: 20_000, signal: signal() });
    expect(cat.stdout).toBe('agent work\n');
    expect((await h.services.runtime.get('vws'))?.baseSnapshotId).toBe(baked.snapshotId);
  });
});
