// The workspace I/O resolver's rules, each its own test, over HTTP against real workers, a real
// local provider and a real archive: warm reads see the sandbox, cold reads the archive, a cold
// write is restored by the next provision and never lost to a racing one; busy is never rebuilt,
// gone is rebuilt once.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProviderBusyError, ProviderGoneError } from '../../src/providers/provider-errors.js';
import type { FleetClient, ProvisionInput, WaitOptions } from '../../src/producers/fleet-client.js';
import { resolveWorkspaceIo } from '../../src/workspace-io/resolve-workspace-io.js';
import { pick } from '../../src/app/pick.js';
import { delegatingProvider } from '../helpers/delegating-provider.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { rng, seedFrom } from '../helpers/rng.js';
import { answer, createWebHarness, type WebHarness } from '../helpers/web-harness.js';

async function provisioned(h: WebHarness, ws: string) {
  const done = await answer(h.request(`/v1/workspaces/${ws}/provision?wait=true`, { json: {} }));
  expect(done.status).toBe(200);
  return done.body.result as { handle: string; generation: number };
}

// The state a reaped workspace is in: its revision archived, no live incarnation.
async function reap(h: WebHarness, ws: string) {
  const address = (await h.services.addresses.get(ws))!;
  expect(await h.services.addresses.unpublish(ws, address.generation)).toBe(true);
  await h.services.providerFor(address).destroy(address.handle, AbortSignal.timeout(30_000));
}

const put = (h: WebHarness, ws: string, file: string, body: string) => h.request(`/v1/workspaces/${ws}/files/${encodeURIComponent(file)}`, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream' } });
const get = (h: WebHarness, ws: string, file: string, query = '') => h.request(`/v1/workspaces/${ws}/files/${encodeURIComponent(file)}${query}`);

describe('workspace I/O resolver', () => {
  it('warm: a read sees a file the sandbox wrote a moment ago; a write lands in the live tree; tree and delete act on it', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['provision', 'persist']);
    const live = await provisioned(h, 'ws-w');
    const ran = await answer(h.request('/v1/workspaces/ws-w/exec', { json: { cmd: ['sh', '-c', 'mkdir -p d && printf fresh > d/new.txt'] } }));
    expect(ran.body.exitCode).toBe(0);
    const read = await get(h, 'ws-w', 'd/new.txt');
    expect(read.status).toBe(200);
    expect(await read.text()).toBe('fresh');
    expect(read.headers.get('x-fleet-source')).toBe('live');
    expect(read.headers.get('x-fleet-generation')).toBe(String(live.generation));

    const written = await answer(put(h, 'ws-w', 'd/from-api.txt', 'api'));
    expect(written).toMatchObject({ status: 200, body: { path: 'd/from-api.txt', bytes: 3, source: { kind: 'live', generation: live.generation } } });
    expect(await readFile(path.join(h.live('ws-w'), 'd/from-api.txt'), 'utf8')).toBe('api');

    const tree = await answer(h.request('/v1/workspaces/ws-w/tree?path=d'));
    expect(tree.body.entries.map((e: { path: string; type: string; size: number }) => [e.path, e.type, e.size])).toEqual([
      ['d/from-api.txt', 'file', 3],
      ['d/new.txt', 'file', 5],
    ]);
    expect(await answer(h.request('/v1/workspaces/ws-w/files/d%2Fnew.txt', { method: 'DELETE' }))).toMatchObject({ status: 200, body: { removed: true, source: { kind: 'live' } } });
    expect(await answer(h.request('/v1/workspaces/ws-w/files/d%2Fnew.txt', { method: 'DELETE' }))).toMatchObject({ status: 200, body: { removed: false } });
    expect((await get(h, 'ws-w', 'd/new.txt')).status).toBe(404);
  });

  it('cold: after the sandbox is reaped, reads, stats and listings come from the current revision; ?revision reads a kept one', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['provision', 'persist']);
    await provisioned(h, 'ws-c');
    await h.write('ws-c', { 'a.txt': 'one', 'sub/b.txt': 'bee' });
    const first = await answer(h.request('/v1/workspaces/ws-c/persist?wait=true', { json: { generation: 1, delete: true, reason: 'turn-end' } }));
    await h.write('ws-c', { 'a.txt': 'two' });
    const second = await answer(h.request('/v1/workspaces/ws-c/persist?wait=true', { json: { generation: 1, delete: true, reason: 'turn-end' } }));
    await reap(h, 'ws-c');

    const read = await get(h, 'ws-c', 'a.txt');
    expect(await read.text()).toBe('two');
    expect(read.headers.get('x-fleet-source')).toBe('archive');
    expect(read.headers.get('x-fleet-revision')).toBe(second.body.result.revision);
    expect(await (await get(h, 'ws-c', 'a.txt', `?revision=${first.body.result.revision}`)).text()).toBe('one');
    const tree = await answer(h.request('/v1/workspaces/ws-c/tree'));
    expect(tree.body.source).toEqual({ kind: 'archive', revision: second.body.result.revision });
    expect(tree.body.entries.map((e: { path: string; type: string }) => `${e.type}:${e.path}`)).toEqual(['file:a.txt', 'dir:sub']);
    expect(tree.body.entries[0].hash).toMatch(/^[0-9a-f]{64}$/);
    expect(await answer(get(h, 'ws-c', 'sub'))).toMatchObject({ status: 409, body: { error: { code: 'NotAFile' } } });
    expect(await answer(get(h, 'ws-c', 'nope.txt'))).toMatchObject({ status: 404, body: { error: { code: 'FileNotFound' } } });
    // Nothing was provisioned by the reads.
    expect(await h.services.addresses.get('ws-c')).toBeNull();
  });

  it('a cold write commits a revision; the next provision restores it; a cold delete is restored as absent', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['provision', 'persist']);
    await provisioned(h, 'ws-cw');
    await h.write('ws-cw', { 'keep.txt': 'keep', 'gone.txt': 'bye' });
    await answer(h.request('/v1/workspaces/ws-cw/persist?wait=true', { json: { generation: 1, delete: true, reason: 'turn-end' } }));
    await reap(h, 'ws-cw');

    const written = await answer(put(h, 'ws-cw', 'notes/cold.md', '# cold'));
    expect(written).toMatchObject({ status: 200, body: { source: { kind: 'archive', revision: expect.any(String) } } });
    expect(await answer(h.request('/v1/workspaces/ws-cw/files/gone.txt', { method: 'DELETE' }))).toMatchObject({ status: 200, body: { removed: true, source: { kind: 'archive' } } });
    const revisions = await answer(h.request('/v1/workspaces/ws-cw/revisions'));
    expect(revisions.body.revisions.slice(0, 2).map((r: { reason: string }) => r.reason)).toEqual(['file-remove', 'file-write']);

    const again = await provisioned(h, 'ws-cw');
    expect(again.generation).toBeGreaterThan(1);
    expect(await readFile(path.join(h.live('ws-cw'), 'notes/cold.md'), 'utf8')).toBe('# cold');
    expect(await readFile(path.join(h.live('ws-cw'), 'keep.txt'), 'utf8')).toBe('keep');
    await expect(readFile(path.join(h.live('ws-cw'), 'gone.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a cold write racing a provision loses nothing and never doubles a sandbox', async () => {
    const seed = seedFrom('WORKSPACE_IO_SEED');
    const random = rng(seed);
    const h = await createWebHarness();
    await testWorkers(h.config, ['provision', 'persist']);
    for (let i = 0; i < 8; i++) {
      const ws = `ws-race-${i}`;
      await provisioned(h, ws);
      await h.write(ws, { 'base.txt': 'base' });
      const g = (await h.services.addresses.get(ws))!.generation;
      await answer(h.request(`/v1/workspaces/${ws}/persist?wait=true`, { json: { generation: g, delete: true, reason: 'turn-end' } }));
      await reap(h, ws);
      const content = `written-${seed}-${i}`;
      const first = random() < 0.5 ? 'write' : 'provision';
      const write = () => answer(put(h, ws, 'raced.txt', content));
      const provision = () => answer(h.request(`/v1/workspaces/${ws}/provision?wait=true`, { json: {} }));
      const [w, p] = first === 'write' ? await Promise.all([write(), provision()]) : await Promise.all([provision(), write()]).then(([a, b]) => [b, a]);
      expect(w!.status, `seed ${seed} iteration ${i}`).toBe(200);
      expect(p!.status, `seed ${seed} iteration ${i}`).toBe(200);
      // Settle: whoever lost, the workspace ends with exactly one live sandbox holding the write.
      const final = await provisioned(h, ws);
      expect(await readFile(path.join(h.live(ws), 'raced.txt'), 'utf8'), `seed ${seed} iteration ${i} (${first} first, write went ${w!.body.source.kind})`).toBe(content);
      const sandboxes = (await h.services.providers.get('local').list(AbortSignal.timeout(10_000))).filter((s) => s.workspaceId === ws && s.state === 'running');
      expect(sandboxes.map((s) => s.handle), `seed ${seed} iteration ${i}`).toEqual([final.handle]);
    }
  });

  it('busy: a live sandbox that keeps timing out is retried with growing deadlines, then WorkspaceBusy; never rebuilt', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['provision', 'persist']);
    await provisioned(h, 'ws-busy');
    let reads = 0;
    let provisions = 0;
    const io = resolveWorkspaceIo({
      ...pick(h.services, 'addresses', 'archive', 'checkpoints', 'storeWriters', 'singleFlight', 'quota', 'config'),
      client: {
        provision: ((input: ProvisionInput, options?: WaitOptions) => {
          provisions++;
          return h.services.client.provision(input, options);
        }) as FleetClient['provision'],
      },
      providerFor: (address) =>
        delegatingProvider(h.services.providerFor(address), {
          readFile: async () => {
            reads++;
            throw new ProviderBusyError('local', 'readFile', 'still busy');
          },
        }),
    });
    await expect(io.read({ workspaceId: 'ws-busy', path: 'x.txt', signal: AbortSignal.timeout(60_000) })).rejects.toMatchObject({ code: 'WorkspaceBusy', retryable: true });
    expect(reads).toBe(3);
    expect(provisions).toBe(0);
    expect((await h.services.addresses.get('ws-busy'))!.generation).toBe(1);
  });

  it('gone: a sandbox that is gone is provisioned again (restored) and the call retried once', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['provision', 'persist']);
    await provisioned(h, 'ws-gone');
    await h.write('ws-gone', { 'kept.txt': 'kept' });
    await answer(h.request('/v1/workspaces/ws-gone/persist?wait=true', { json: { generation: 1, delete: true, reason: 'turn-end' } }));
    // The sandbox dies under the address (its host lost it): the address still names it.
    const address = (await h.services.addresses.get('ws-gone'))!;
    await h.services.providerFor(address).destroy(address.handle, AbortSignal.timeout(30_000));
    let provisions = 0;
    let gone = 0;
    const io = resolveWorkspaceIo({
      ...pick(h.services, 'addresses', 'archive', 'checkpoints', 'storeWriters', 'singleFlight', 'quota', 'config'),
      client: {
        provision: ((input: ProvisionInput, options?: WaitOptions) => {
          provisions++;
          return h.services.client.provision(input, options);
        }) as FleetClient['provision'],
      },
      providerFor: (at) =>
        delegatingProvider(h.services.providerFor(at), {
          readFile: async (handle, file, signal) => {
            if (handle === address.handle) {
              gone++;
              throw new ProviderGoneError('local', 'readFile', 'sandbox not found');
            }
            return h.services.providerFor(at).readFile(handle, file, signal);
          },
        }),
    });
    const read = await io.read({ workspaceId: 'ws-gone', path: 'kept.txt', signal: AbortSignal.timeout(120_000) });
    expect(read.content.toString()).toBe('kept');
    expect(read.source).toMatchObject({ kind: 'live', generation: 2 });
    expect({ provisions, gone }).toEqual({ provisions: 1, gone: 1 });
  });
});
