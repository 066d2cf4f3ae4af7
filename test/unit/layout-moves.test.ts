// What `fleet redis migrate-keys` moves, as pure data.
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { INDEX_KINDS, WORKSPACE_KEY_BUILDERS, workspaceMoves, type IndexContext } from '../../src/key-migration/layout-moves.js';

const single = fleetKeys('{fleet}');
const sharded = fleetKeys('{fleet}', 'sharded');
const context: IndexContext = { uidRange: { first: 1_000, last: 1_999 }, checkpointOwner: (id) => (id === 'c1' ? 'ws' : null) };

describe('layout moves', () => {
  it("names every builder of a workspace's own keys (a new one must be added, or migrations would strand it)", () => {
    const own = Object.entries(single)
      .filter(([name, build]) => typeof build === 'function' && build.length === 1 && !['bucket', 'queuePrefix', 'bullQueueOfIdKey', 'workspaceOfKey', 'lock'].includes(name))
      .filter(([, build]) => String((build as (ws: string) => unknown)('ws-probe')).includes(':ws:ws-probe:'))
      .map(([name]) => name);
    expect([...WORKSPACE_KEY_BUILDERS].sort()).toEqual(own.sort());
  });

  it("moves each key of a workspace and its checkpoint records to the workspace's bucket, and nothing between layouts that share the names", () => {
    const moves = workspaceMoves(single, sharded, 'ws', ['c1']);
    expect(moves).toHaveLength(WORKSPACE_KEY_BUILDERS.length + 1);
    const tag = `{fleet/ws${sharded.bucket('ws')}}`;
    expect(moves).toContainEqual({ from: '{fleet}:ws:ws:gen', to: `${tag}:ws:ws:gen` });
    expect(moves).toContainEqual({ from: '{fleet}:ckpt:c1', to: `${tag}:ckpt:c1` });
    expect(workspaceMoves(single, fleetKeys('{fleet}', 'per-queue'), 'ws', ['c1'])).toEqual([]);
    // And back.
    expect(workspaceMoves(sharded, single, 'ws', ['c1'])).toContainEqual({ from: `${tag}:ckpt:c1`, to: '{fleet}:ckpt:c1' });
  });

  it('places index entries by the workspace (or uid share) they name, and refuses to place one naming none', () => {
    const kind = (name: string) => INDEX_KINDS.find((k) => k.name === name)!;
    expect(kind('workspaces').target(sharded, 'ws', context)).toBe(sharded.bucket('ws'));
    expect(kind('pendingCreates').target(sharded, 'ws:g12', context)).toBe(sharded.bucket('ws'));
    expect(kind('unattached').target(sharded, 'c1', context)).toBe(sharded.bucket('ws'));
    expect(kind('unattached').target(sharded, 'c-unknown', context)).toBeNull();
    expect(kind('migrated').target(sharded, '../etc', context)).toBeNull();
    expect(kind('sandboxUidOwners').target(sharded, String(1_000 + 130), context)).toBe(2);
    expect(kind('sandboxUidOwners').target(sharded, 'x', context)).toBeNull();
    expect(kind('sandboxUidOwners').target(single, '1500', context)).toBe(0);
  });

  it("reads a workspace back from its keys' names in every layout, and nothing else", () => {
    for (const keys of [single, sharded]) {
      expect(keys.workspaceOfKey(keys.address('my-ws'))).toBe('my-ws');
      expect(keys.workspaceOfKey(keys.checkpointIndex('w_1'))).toBe('w_1');
      expect(keys.workspaceOfKey(keys.hosts())).toBeNull();
      expect(keys.workspaceOfKey(keys.checkpoint(keys.bucket('my-ws'), 'c1'))).toBeNull();
    }
    expect(sharded.workspaceOfKey(single.address('my-ws'))).toBeNull();
    expect(single.workspaceOfKey(sharded.address('my-ws'))).toBeNull();
    expect(sharded.workspaceKeyPattern()).toBe('{fleet/ws*}:ws:*');
    expect(single.workspaceKeyPattern()).toBe('{fleet}:ws:*');
  });
});
