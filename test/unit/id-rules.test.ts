// The id rules every destructive call relies on (src/lib/id-rules.ts, revisionAt): what the fleet
// makes passes, and `.`, `..`, separators and other workspaces' ids never do.
import { describe, expect, it } from 'vitest';
import { archivePaths, revisionAt } from '../../src/archive/archive-paths.js';
import { firstInvalidId, handleProvider } from '../../src/providers/id-rules.js';
import { localHandle } from '../../src/providers/local/live-paths.js';
import { sandboxName } from '../../src/providers/vercel/sandbox-name.js';

const REVISION = 'r20261130T101530123Z-g3-k7f2q9';
const LONG_WS = 'w'.repeat(100);

describe('id rules', () => {
  it('accepts every id the fleet makes', () => {
    expect(firstInvalidId({ workspaceId: 'ws-1', revision: REVISION, checkpointId: '0b6f7f2e-4d51-4c8a-9a1e-2f3b4c5d6e7f', checkpointKind: 'portable_workspace', provider: 'local' })).toBeNull();
    for (const snapshotId of ['snap-ws-1-g3-0a1b2c3d', 'snap_0123456789abcdef01234567', 'failed-abcdef012345-a1b2c3', 'base-1', 'old']) expect(firstInvalidId({ snapshotId })).toBeNull();
    expect(firstInvalidId({ workspaceId: 'ws-1', handle: localHandle('host-a', 'ws-1', 7) })).toBeNull();
    expect(firstInvalidId({ workspaceId: 'ws-1', handle: sandboxName('ws-1', 7) })).toBeNull();
    expect(firstInvalidId({ workspaceId: LONG_WS, handle: sandboxName(LONG_WS, 2) })).toBeNull();
    expect(handleProvider(localHandle('host-a', 'ws-1', 1))).toBe('local');
    expect(handleProvider(sandboxName(LONG_WS, 2))).toBe('vercel');
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
    expect(firstInvalidId({ workspaceId: 'x', handle: sandboxName('victim', 1) })).toMatchObject({ field: 'handle' });
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
