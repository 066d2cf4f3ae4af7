// verifyRevisions with a plain-object history: what a fleet at work does while verify runs (GC
// forgetting a record, a persist moving the head just before it flips `current`) is not damage.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArchiveStore } from '../../src/archive/archive-store.js';
import { makeManifest, scanTree } from '../../src/archive/manifest.js';
import { verifyRevisions, type VerifyDeps } from '../../src/archive/verify-revisions.js';
import type { Checkpoint } from '../../src/state/checkpoint-store.js';
import { tempDir } from '../helpers/fleet-env.js';

const A = 'r20261130T101530123Z-g1-aaaaaa';
const B = 'r20261130T101531123Z-g1-bbbbbb';

// Commits a one-file revision the way a persist does and returns its checkpoint record.
async function commitRevision(archive: ArchiveStore, revision: string): Promise<Checkpoint> {
  const paths = await archive.ensure('ws');
  await mkdir(paths.tmp(revision));
  await writeFile(path.join(paths.tmp(revision), 'f.txt'), revision);
  const scan = await scanTree(paths.tmp(revision), null);
  const manifest = makeManifest({ workspaceId: 'ws', revision, generation: 1, reason: 'manual', turnId: null, parent: null, mode: 'reconcile', createdAt: new Date(0).toISOString() }, scan);
  await archive.writeManifest('ws', manifest);
  await archive.commit('ws', revision);
  await archive.flipCurrent('ws', revision);
  return { id: `ck-${revision}`, workspaceId: 'ws', generation: 1, kind: 'portable_workspace', workspaceRevision: revision, providerRef: null, sourceTurnId: null, reason: 'manual', files: manifest.files, bytes: manifest.bytes, createdAt: 0, attachedAt: 1 };
}

// A history whose answers change on each call (one array entry per call; the last one repeats).
function history(heads: (Checkpoint | null)[], ids: string[], records: ((id: string) => Checkpoint | null)[]): VerifyDeps['history'] {
  let h = 0;
  let r = 0;
  return {
    current: async () => heads[Math.min(h++, heads.length - 1)]!,
    attachedIds: async () => [...ids],
    get: async (_workspaceId, id) => records[Math.min(r++, records.length - 1)]!(id),
  };
}

describe('verifyRevisions', () => {
  it('a record GC forgets between listing and checking is not reported', async () => {
    const archive = new ArchiveStore(await tempDir('archive'));
    const b = await commitRevision(archive, B);
    const gone = { ...b, id: 'ck-gone', workspaceRevision: A };
    const byId = (id: string) => (id === b.id ? b : id === gone.id ? gone : null);
    const result = await verifyRevisions({ archive, history: history([b], [gone.id, b.id], [byId, byId, (id) => (id === b.id ? b : null)]) }, ['ws']);
    expect(result.problems).toEqual([]);
    expect(result.attached).toBe(2);
  });

  it('current trailing a head attached a moment ago is read again; one that stays behind is reported', async () => {
    const archive = new ArchiveStore(await tempDir('archive'));
    const a = await commitRevision(archive, A);
    const b = await commitRevision(archive, B);
    await archive.flipCurrent('ws', A);
    const byId = (id: string) => (id === a.id ? a : id === b.id ? b : null);
    // A persist attached B and flips `current` right after verify's first look.
    let reads = 0;
    const flipping: VerifyDeps['history'] = {
      ...history([b], [a.id, b.id], [byId]),
      current: async () => {
        if (++reads === 2) await archive.flipCurrent('ws', B);
        return b;
      },
    };
    const moving = await verifyRevisions({ archive, history: flipping }, ['ws']);
    expect(reads).toBe(2);
    expect(moving.problems).toEqual([]);
    await archive.flipCurrent('ws', A);
    const stuck = await verifyRevisions({ archive, history: history([b], [a.id, b.id], [byId]) }, ['ws']);
    expect(stuck.problems).toEqual([expect.objectContaining({ workspaceId: 'ws', revision: A, problem: 'current-not-head' })]);
  });

  it('samples only the re-hashing: structure problems of attached records are found with nothing re-hashed', async () => {
    const archive = new ArchiveStore(await tempDir('archive'));
    const a = await commitRevision(archive, A);
    const b = await commitRevision(archive, B);
    await writeFile(archive.paths('ws').manifest(A), 'garbage');
    const result = await verifyRevisions({ archive, history: history([b], [a.id, b.id], [(id) => (id === a.id ? a : b)]) }, ['ws'], { sample: 0.5, random: () => 0.9 });
    expect(result.checks).toEqual([]);
    expect(result.problems).toEqual([expect.objectContaining({ revision: A, problem: 'manifest-invalid' })]);
  });
});
