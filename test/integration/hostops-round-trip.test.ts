// Every hostops operation end to end without Redis: the client (RemoteLocalProvider) over a
// transport that carries the request and the reply as JSON and the failure through the real
// failure codec (what BullMQ stores), to the real hostops processor on a real LocalProvider. Each
// reply the serving host gives passes the client's result schema, and `list` and
// `snapshotStatus` answer what the serving host holds.
import { describe, expect, it } from 'vitest';
import { archivePaths } from '../../src/archive/archive-paths.js';
import { decodeFailure, encodeFailure } from '../../src/errors/failure-codec.js';
import type { HostOpsTransport } from '../../src/hostops/hostops-transport.js';
import { RemoteLocalProvider } from '../../src/hostops/remote-local-provider.js';
import { ProviderGoneError } from '../../src/providers/provider-errors.js';
import { BASE, WS_REVISION, hostopsHost, rejection, type HostopsHost } from '../helpers/hostops-host.js';

const signal = () => AbortSignal.timeout(30_000);

// The wire of a BullMQ job: JSON both ways (`undefined` stored as null), failures as "<code>: <message>".
function jsonTransport(h: HostopsHost): HostOpsTransport {
  let jobs = 0;
  return {
    call: async (hostId, request) => {
      const jobId = String(++jobs);
      try {
        return JSON.parse(JSON.stringify((await h.run(JSON.parse(JSON.stringify(request)))) ?? null));
      } catch (error) {
        throw decodeFailure(`hostops@${hostId}`, jobId, encodeFailure(error));
      }
    },
  };
}

describe('hostops round trip', () => {
  it('runs every operation on the serving host and hands back what its result schema describes', async () => {
    const h = await hostopsHost();
    const remote = new RemoteLocalProvider(jsonTransport(h), h.config.hostId);

    const created = await remote.create({ workspaceId: 'other', generation: 1, source: { type: 'base-snapshot', snapshotId: BASE }, signal: signal() });
    expect(created).toEqual({ handle: `local:${h.config.hostId}:other:g1`, hostId: h.config.hostId });
    expect(await remote.readFile(created.handle, 'base.txt', signal())).toEqual(Buffer.from('base'));
    expect(await remote.readFile(created.handle, 'absent.txt', signal())).toBeNull();

    await remote.writeFiles(h.handle, [{ path: 'sub/bin.dat', content: Buffer.from([0, 1, 2, 255]) }], signal());
    expect(await remote.readFile(h.handle, 'sub/bin.dat', signal())).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(await remote.exec(h.handle, { cmd: ['sh', '-c', 'cat notes.txt; echo err >&2; exit 3'], timeoutMs: 10_000, signal: signal() })).toMatchObject({
      exitCode: 3,
      signal: null,
      stdout: 'mine',
      stderr: 'err\n',
      timedOut: false,
    });

    const info = await remote.get(h.handle, signal());
    expect(info).toMatchObject({ handle: h.handle, workspaceId: 'ws', generation: 1, hostId: h.config.hostId, state: 'running' });
    expect((await remote.list(signal())).map((s) => s.handle).sort()).toEqual([created.handle, h.handle].sort());

    await remote.importTree(h.handle, archivePaths(h.config.paths.archiveRoot, 'ws').revision(WS_REVISION), signal());
    expect(await h.liveTree()).toEqual({ 'restored.txt': Buffer.from('from the archive').toString('base64') });
    expect(await remote.readReady(h.handle, signal())).toBeNull();
    await remote.markReady(h.handle, { generation: 1, source: WS_REVISION, readyAt: 5 }, signal());
    expect(await remote.readReady(h.handle, signal())).toEqual({ generation: 1, source: WS_REVISION, readyAt: 5 });
    await remote.clearReady(h.handle, signal());
    expect(await remote.readReady(h.handle, signal())).toBeNull();

    const { snapshotId } = await remote.snapshot(h.handle, { expirationMs: 0, signal: signal() });
    expect(await remote.snapshotStatus(snapshotId, signal())).toBe('usable');
    await remote.deleteSnapshot(snapshotId, signal());
    expect(await remote.snapshotStatus(snapshotId, signal())).toBe('missing');
    expect(await remote.snapshotStatus(BASE, signal())).toBe('usable');

    await remote.stop(h.handle, signal());
    expect(await remote.get(h.handle, signal())).toMatchObject({ state: 'stopped' });
    await remote.resume(h.handle, signal());
    await remote.destroy(created.handle, signal());
    expect(await remote.get(created.handle, signal())).toBeNull();
    // A failure on the serving host keeps its class across the wire.
    expect(await rejection(remote.readFile(created.handle, 'base.txt', signal()))).toBeInstanceOf(ProviderGoneError);
  });
});
