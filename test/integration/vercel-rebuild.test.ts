// Rebuilding a Vercel workspace (real SDK against the loopback stand-in): the archive is restored
// onto the workspace's own base, and snapshots are checked at the provider before they are trusted.
import { describe, expect, it } from 'vitest';
import { bakeBase } from '../../src/bake/bake-base.js';
import { BaseManifest } from '../../src/queues/base-manifest.js';
import { isFleetError } from '../../src/errors/fleet-error.js';
import { provisionWorkspace } from '../../src/provision/provision-workspace.js';
import { parsePayload } from '../../src/queues/payload.js';
import { createVercelHarness } from '../helpers/vercel-harness.js';
import type { Harness } from '../helpers/workspace-harness.js';

const signal = () => AbortSignal.timeout(30_000);

// A base whose setup installs a tool outside the workspace tree (as `apt-get install` does).
const toolBase = parsePayload('manifest', BaseManifest, {
  schemaVersion: 1,
  name: 'tool-base',
  runtime: 'node22',
  files: [{ path: 'README.md', content: 'base readme' }],
  setup: ["mkdir -p ../tools && printf '#!/bin/sh\\necho baked-tool-ok\\n' > ../tools/fleet-tool && chmod 755 ../tools/fleet-tool"],
  smoke: ['../tools/fleet-tool'],
});

const provision = (h: Harness, workspaceId: string) => provisionWorkspace(h.services, { workspaceId, provider: 'vercel', lane: 'default' }, h.ctx());
const codeOf = (error: unknown) => (isFleetError(error) ? { code: error.code, retryable: error.retryable } : { code: String(error), retryable: undefined });

describe('Vercel rebuilds', () => {
  it('19.2: a rebuilt Vercel workspace keeps the tools its base installed (restored onto its base, archive on top)', async () => {
    const { h } = await createVercelHarness();
    const vercel = h.services.providers.get('vercel');
    const baked = await bakeBase(h.services, { manifest: toolBase, activate: true, provider: 'vercel' }, h.ctx());
    const first = await provision(h, 'agent');
    expect(first).toMatchObject({ outcome: 'created-from-base', source: baked.snapshotId });
    const work = await vercel.exec(first.handle, { cmd: ['sh', '-c', 'echo "turn 1" > notes.txt && rm README.md && ../tools/fleet-tool'], timeoutMs: 20_000, signal: signal() });
    expect(work).toMatchObject({ exitCode: 0, stdout: 'baked-tool-ok\n' });
    const persisted = await h.persist('agent');

    // The sandbox dies; the workspace is rebuilt from its archive.
    await vercel.destroy(first.handle, signal());
    const rebuilt = await provision(h, 'agent');
    expect(rebuilt).toMatchObject({ outcome: 'restored', source: persisted.revision, generation: 2 });
    const tool = await vercel.exec(rebuilt.handle, { cmd: ['sh', '-c', '../tools/fleet-tool'], timeoutMs: 20_000, signal: signal() });
    expect(tool).toMatchObject({ exitCode: 0, stdout: 'baked-tool-ok\n' });
    // The tree is exactly the archive's (the agent's file, the bake marker), the file it deleted is not back.
    const tree = await vercel.exec(rebuilt.handle, { cmd: ['sh', '-c', 'cat notes.txt; ls -A'], timeoutMs: 20_000, signal: signal() });
    expect(tree.stdout).toBe('turn 1\n.fleet-base.json\nnotes.txt\n');
    expect((await h.services.runtime.get('agent'))?.baseSnapshotId).toBe(baked.snapshotId);
  });

  it('19.9: an expired workspace snapshot is a WorkspaceConflict (permanent), not a retried ProviderGone', async () => {
    const { h, standin } = await createVercelHarness();
    const vercel = h.services.providers.get('vercel');
    const first = await provision(h, 'native');
    await vercel.exec(first.handle, { cmd: ['sh', '-c', 'echo kept > kept.txt'], timeoutMs: 20_000, signal: signal() });
    const { snapshotId } = await vercel.snapshot(first.handle, { expirationMs: 86_400_000, signal: signal() });
    await h.services.checkpoints.record({ workspaceId: 'native', generation: 1, kind: 'provider_native', workspaceRevision: snapshotId });
    await vercel.destroy(first.handle, signal());
    // The snapshot's expiry passes (instead of waiting a day).
    standin.state.snapshots.get(snapshotId)!.expiresAt = Date.now() - 1;
    const error = await provision(h, 'native').then(() => null, (e: unknown) => e);
    expect(codeOf(error)).toEqual({ code: 'WorkspaceConflict', retryable: false });
    expect((error as Error).message).toContain(`${snapshotId} is expired`);
    expect(await h.services.addresses.generation('native')).toBe(1);
  });

  it('19.9: a base deleted at the provider is never reused: provisioning refuses it, a bake of the same manifest bakes again', async () => {
    const { h } = await createVercelHarness();
    const vercel = h.services.providers.get('vercel');
    const baked = await bakeBase(h.services, { manifest: toolBase, activate: true, provider: 'vercel' }, h.ctx());
    await vercel.deleteSnapshot(baked.snapshotId, signal());

    const refused = await provision(h, 'new-ws').then(() => null, (e: unknown) => e);
    expect(codeOf(refused)).toEqual({ code: 'SnapshotUnavailable', retryable: false });
    expect(await h.services.addresses.generation('new-ws')).toBe(0);
    expect((await h.services.bases.get(baked.snapshotId))?.status).toBe('gone');

    const again = await bakeBase(h.services, { manifest: toolBase, activate: true, provider: 'vercel' }, h.ctx());
    expect(again).toMatchObject({ reused: false, activated: true });
    expect(again.snapshotId).not.toBe(baked.snapshotId);
    expect(await provision(h, 'new-ws')).toMatchObject({ outcome: 'created-from-base', source: again.snapshotId });
  });
});
