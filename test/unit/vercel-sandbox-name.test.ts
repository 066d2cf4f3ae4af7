import { describe, expect, it } from 'vitest';
import { describeSandbox, fleetTags } from '../../src/providers/vercel/sandbox-info.js';
import { parseSandboxName, sandboxName } from '../../src/providers/vercel/sandbox-name.js';

const VERCEL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

describe('sandboxName', () => {
  it('is fleet-<ws>-g<gen> for ordinary workspace ids and deterministic', () => {
    expect(sandboxName('ws_1-A', 7)).toBe('fleet-ws_1-A-g7');
    expect(sandboxName('ws_1-A', 7)).toBe(sandboxName('ws_1-A', 7));
    expect(sandboxName('ws', 1)).not.toBe(sandboxName('ws', 2));
  });

  it('hashes long ids within Vercel name rules, keeping them distinct', () => {
    const a = `${'a'.repeat(100)}1`;
    const b = `${'a'.repeat(100)}2`;
    for (const id of [a, b, 'x'.repeat(128)]) expect(sandboxName(id, Number.MAX_SAFE_INTEGER)).toMatch(VERCEL_NAME);
    expect(sandboxName(a, 1)).not.toBe(sandboxName(b, 1));
    expect(sandboxName(a, 1).startsWith(`fleet-${'a'.repeat(40)}-`)).toBe(true);
  });

  it('never lets a raw id collide with a hashed one (64 characters raw, 65 hashed)', () => {
    const hashed = sandboxName('h'.repeat(65), 1);
    const part = hashed.slice('fleet-'.length, hashed.lastIndexOf('-g'));
    expect(part).toHaveLength(65);
    expect(sandboxName('r'.repeat(64), 1)).toBe(`fleet-${'r'.repeat(64)}-g1`);
  });

  it('parses back generation and (unhashed) workspace id', () => {
    expect(parseSandboxName('fleet-my-ws-g12-g3')).toEqual({ workspaceId: 'my-ws-g12', generation: 3 });
    expect(parseSandboxName(sandboxName('q'.repeat(100), 5))).toEqual({ workspaceId: null, generation: 5 });
    expect(parseSandboxName('someone-else')).toBeNull();
    expect(parseSandboxName('fleet-ws-g0')).toBeNull();
  });
});

describe('describeSandbox', () => {
  it('takes the workspace id from the tags and maps statuses to running/stopped', () => {
    const longId = 'z'.repeat(100);
    const name = sandboxName(longId, 2);
    expect(describeSandbox({ name, status: 'running', tags: fleetTags(longId, 2) })).toEqual({ handle: name, workspaceId: longId, generation: 2, hostId: 'vercel', state: 'running' });
    // The creation time comes along as epoch ms (list items carry a number, a Sandbox a Date).
    expect(describeSandbox({ name, status: 'running', tags: fleetTags(longId, 2), createdAt: 1_700_000_000_000 })?.createdAt).toBe(1_700_000_000_000);
    expect(describeSandbox({ name, status: 'running', tags: fleetTags(longId, 2), createdAt: new Date(1_700_000_000_000) })?.createdAt).toBe(1_700_000_000_000);
    for (const status of ['stopped', 'stopping', 'snapshotting', 'failed', 'aborted']) {
      expect(describeSandbox({ name: 'fleet-ws-g1', status })?.state).toBe('stopped');
    }
    expect(describeSandbox({ name: 'fleet-ws-g1', status: 'pending' })?.state).toBe('running');
  });

  it('ignores foreign sandboxes and hashed names without tags', () => {
    expect(describeSandbox({ name: 'my-app', status: 'running' })).toBeNull();
    expect(describeSandbox({ name: sandboxName('q'.repeat(100), 1), status: 'running' })).toBeNull();
    expect(describeSandbox({ name: 'fleet-ws-g1', status: 'running', tags: fleetTags('ws', 9) })).toBeNull();
  });
});
