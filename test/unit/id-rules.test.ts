// The id rules every destructive call relies on (src/lib/id-rules.ts, revisionAt): what the fleet
// makes passes, and `.`, `..`, separators and other workspaces' ids never do.
import { describe, expect, it } from 'vitest';
import { archivePaths, revisionAt } from '../../src/archive/archive-paths.js';
import { firstInvalidId, handleProvider } from '../../src/providers/id-rules.js';
import { localHandle } from '../../src/providers/local/live-paths.js';
import { legacySandboxName, sandboxName } from '../../src/providers/vercel/sandbox-name.js';
import { vercelHandle } from '../../src/providers/vercel/vercel-handle.js';

const REVISION = 'r20261130T101530123Z-g3-k7f2q9';
const LONG_WS = 'w'.repeat(100);

describe('id rules', () => {
  it('accepts every id the fleet makes', () => {
    expect(firstInvalidId({ workspaceId: 'ws-1', revision: REVISION, checkpointId: '0b6f7f2e-4d51-4c8a-9a1e-2f3b4c5d6e7f', checkpointKind: 'portable_workspace', provider: 'local' })).toBeNull();
    for (const snapshotId of ['snap-ws-1-g3-0a1b2c3d', 'snap_0123456789abcdef01234567', 'failed-abcdef012345-a1b2c3', 'base-1', 'old']) expect(firstInvalidId({ snapshotId })).toBeNull();
    expect(firstInvalidId({ workspaceId: 'ws-1', handle: localHandle('host-a', 'ws-1', 7) })).toBeNull();
    expect(firstInvalidId({ workspaceId: 'ws-1', handle: vercelHandle(sandboxName('ws-1'), 7) })).toBeNull();
    expect(firstInvalidId({ workspaceId: LONG_WS, handle: vercelHandle(sandboxName(LONG_WS), 2) })).toBeNull();
    // Legacy per-generation names are handles still.
    expect(firstInvalidId({ workspaceId: 'ws-1', handle: legacySandboxName('ws-1', 7) })).toBeNull();
    expect(firstInvalidId({ workspaceId: LONG_WS, handle: legacySandboxName(LONG_WS, 2) })).toBeNull();
    expect(handleProvider(localHandle('host-a', 'ws-1', 1))).toBe('local');
    expect(handleProvider(vercelHandle(sandboxName(LONG_WS), 2))).toBe('vercel');
    expect(handleProvider(legacySandboxName(LONG_WS, 2))).toBe('vercel');
  });

  it('refuses ., .., separators, wrong types and handles of other workspaces, naming field and value', () => {
    for (const workspaceId of ['.', '..', 'a/b', '', 'x'.repeat(129)]) expect(firstInvalidId({ workspaceId })).toMatchObject({ field: 'workspaceId', value: workspaceId });
    for (const snapshotId of ['.', '..', '../x', 'a/b', '.hidden', '-rf', '', 'x'.repeat(201)]) expect(firstInvalidId({ snapshotId })).toMatchObject({ field: 'snapshotId', value: snapshotId });
    for (const revision of ['..', '../../victim', `${REVISION}/..`, `.tmp-${REVISION}`]) expect(firstInvalidId({ revision })).toMatchObject({ field: 'revision', value: revision });
    expect(firstInvalidId({ checkpointId: '..' })).toMatchObject({ field: 'checkpointId' });
    expect(firstInvalidId({ checkpointKind: 'other' })).toMatchObject({ field: 'checkpointKind' });
    expect(firstInvalidId({ provider: 'docker' })).toMatchObject({ field: 'provider' });
    expect(firstInvalidId({ workspaceId: 3 })).toMatchObject({ field: 'workspaceId', value: '3', reason: 'must be a string' });
    expect(firstInvalidId({ workspaceId: 'x', handle: localHandle('host-a', 'victim', 1) })).toMatchObject({ field: 'handle', reason: 'must name an incarnation of workspace x' });
    expect(firstInvalidId({ workspaceId: 'x', handle: vercelHandle(sandboxName('victim'), 1) })).toMatchObject({ field: 'handle' });
    expect(firstInvalidId({ workspaceId: 'x', handle: legacySandboxName('victim', 1) })).toMatchObject({ field: 'handle' });
    // A durable name with no generation, or one of another form, is no handle.
    for (const handle of [sandboxName('x'), 'vercel:fleet-x', 'vercel:fleet-x:g0', 'vercel:fleet-x:g1:g2', 'vercel:../x:g1', 'vercel:fleet-x/..:g1']) {
      expect(firstInvalidId({ workspaceId: 'x', handle })).toMatchObject({ field: 'handle', value: handle });
    }
    // An invalid workspace id owns no handle (and never throws), whichever is checked first.
    expect(firstInvalidId({ handle: vercelHandle(sandboxName('x'), 1), workspaceId: 'a/b' })).toMatchObject({ field: 'handle' });
    expect(firstInvalidId({ handle: 'local:host-a:..:g1' })).toMatchObject({ field: 'handle' });
    expect(handleProvider('../x')).toBeNull();
  });

  it('revisionAt: only the exact revision directory of that workspace under that archive', () => {
    const own = archivePaths('/fleet/archive', 'ws');
    expect(revisionAt('/fleet/archive', 'ws', own.revision(REVISION))).toBe(REVISION);
    for (const dir of [
      archivePaths('/fleet/archive', 'victim').revision(REVISION),
      `${own.revs}/../../victim/revs/${REVISION}`,
      `${own.revision(REVISION)}/`,
      own.tmp(REVISION),
      archivePaths('/elsewhere', 'ws').revision(REVISION),
      `fleet/archive/ws/revs/${REVISION}`,
      '/etc',
    ]) {
      expect(revisionAt('/fleet/archive', 'ws', dir), dir).toBeNull();
    }
    expect(revisionAt('/fleet/archive', '..', archivePaths('/fleet/archive', '..').revision(REVISION))).toBeNull();
  });
});
