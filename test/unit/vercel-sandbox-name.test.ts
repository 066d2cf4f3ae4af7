import { describe, expect, it } from 'vitest';
import { describeSandbox, fleetTags } from '../../src/providers/vercel/sandbox-info.js';
import { legacySandboxName, parseLegacySandboxName, sandboxName } from '../../src/providers/vercel/sandbox-name.js';
import { parseVercelHandle, vercelHandle } from '../../src/providers/vercel/vercel-handle.js';

const VERCEL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

describe('sandboxName', () => {
  it('is one durable fleet-<ws> for every generation of ordinary workspace ids', () => {
    expect(sandboxName('ws_1-A')).toBe('fleet-ws_1-A');
    expect(sandboxName('ws_1-A')).toBe(sandboxName('ws_1-A'));
    expect(legacySandboxName('ws_1-A', 7)).toBe('fleet-ws_1-A-g7');
  });

  it('hashes long ids within Vercel name rules, keeping them distinct', () => {
    const a = `${'a'.repeat(100)}1`;
    const b = `${'a'.repeat(100)}2`;
    for (const id of [a, b, 'x'.repeat(128)]) {
      expect(sandboxName(id)).toMatch(VERCEL_NAME);
      expect(legacySandboxName(id, Number.MAX_SAFE_INTEGER)).toMatch(VERCEL_NAME);
    }
    expect(sandboxName(a)).not.toBe(sandboxName(b));
    expect(sandboxName(a).startsWith(`fleet-${'a'.repeat(40)}-`)).toBe(true);
  });

  it('never lets a raw id collide with a hashed one (64 characters raw, 65 hashed)', () => {
    expect(sandboxName('h'.repeat(65)).slice('fleet-'.length)).toHaveLength(65);
    expect(sandboxName('r'.repeat(64))).toBe(`fleet-${'r'.repeat(64)}`);
  });

  it('parses legacy names back to generation and (unhashed) workspace id', () => {
    expect(parseLegacySandboxName('fleet-my-ws-g12-g3')).toEqual({ workspaceId: 'my-ws-g12', generation: 3 });
    expect(parseLegacySandboxName(legacySandboxName('q'.repeat(100), 5))).toEqual({ workspaceId: null, generation: 5 });
    expect(parseLegacySandboxName('someone-else')).toBeNull();
    expect(parseLegacySandboxName('fleet-ws-g0')).toBeNull();
  });
});

describe('vercel handles', () => {
  it('name the durable name and the generation; legacy names are their own handles', () => {
    const handle = vercelHandle(sandboxName('ws'), 3);
    expect(handle).toBe('vercel:fleet-ws:g3');
    expect(parseVercelHandle(handle)).toEqual({ name: 'fleet-ws', generation: 3, durable: true });
    expect(parseVercelHandle(vercelHandle(sandboxName('z'.repeat(128)), Number.MAX_SAFE_INTEGER))).toMatchObject({ durable: true });
    expect(parseVercelHandle('fleet-ws-g3')).toEqual({ name: 'fleet-ws-g3', generation: 3, durable: false });
    for (const bad of ['fleet-ws', 'vercel:fleet-ws', 'vercel:fleet-ws:g0', 'vercel:other:g1', 'vercel:fleet-a:b:g1', 'local:h:ws:g1', '']) expect(parseVercelHandle(bad)).toBeNull();
  });
});

describe('describeSandbox', () => {
  it('knows a durable name by its tags: the handle carries the tagged generation', () => {
    const longId = 'z'.repeat(100);
    const name = sandboxName(longId);
    expect(describeSandbox({ name, status: 'running', tags: fleetTags(longId, 2) })).toEqual({ handle: vercelHandle(name, 2), workspaceId: longId, generation: 2, hostId: 'vercel', state: 'running' });
    // A workspace whose id ends like a generation: its durable name is not read as a legacy one.
    expect(describeSandbox({ name: 'fleet-ws-g12', status: 'running', tags: fleetTags('ws-g12', 4) })).toMatchObject({ handle: 'vercel:fleet-ws-g12:g4', workspaceId: 'ws-g12', generation: 4 });
    // Session and snapshot ids come along as metadata.
    expect(describeSandbox({ name: 'fleet-ws', status: 'stopped', tags: fleetTags('ws', 1), currentSessionId: 'sess_1', currentSnapshotId: 'snap_1' })).toMatchObject({ sessionId: 'sess_1', snapshotId: 'snap_1' });
  });

  it('still describes legacy per-generation sandboxes, and maps statuses to running/stopped', () => {
    const longId = 'z'.repeat(100);
    const name = legacySandboxName(longId, 2);
    expect(describeSandbox({ name, status: 'running', tags: fleetTags(longId, 2) })).toEqual({ handle: name, workspaceId: longId, generation: 2, hostId: 'vercel', state: 'running' });
    // The creation time comes along as epoch ms (list items carry a number, a Sandbox a Date).
    expect(describeSandbox({ name, status: 'running', tags: fleetTags(longId, 2), createdAt: 1_700_000_000_000 })?.createdAt).toBe(1_700_000_000_000);
    expect(describeSandbox({ name, status: 'running', tags: fleetTags(longId, 2), createdAt: new Date(1_700_000_000_000) })?.createdAt).toBe(1_700_000_000_000);
    for (const status of ['stopped', 'stopping', 'snapshotting', 'failed', 'aborted']) {
      expect(describeSandbox({ name: 'fleet-ws-g1', status })?.state).toBe('stopped');
    }
    expect(describeSandbox({ name: 'fleet-ws-g1', status: 'pending' })?.state).toBe('running');
  });

  it('ignores foreign sandboxes, hashed names without tags and tags that do not fit the name', () => {
    expect(describeSandbox({ name: 'my-app', status: 'running' })).toBeNull();
    expect(describeSandbox({ name: legacySandboxName('q'.repeat(100), 1), status: 'running' })).toBeNull();
    expect(describeSandbox({ name: 'fleet-ws-g1', status: 'running', tags: fleetTags('ws', 9) })).toBeNull();
    expect(describeSandbox({ name: 'fleet-ws', status: 'running', tags: fleetTags('other', 1) })).toBeNull();
    expect(describeSandbox({ name: 'fleet-ws', status: 'running', tags: { 'fleet-workspace': 'ws', 'fleet-generation': 'x' } })).toBeNull();
    expect(describeSandbox({ name: 'fleet-ws', status: 'running', tags: fleetTags('../ws', 1) })).toBeNull();
  });
});
