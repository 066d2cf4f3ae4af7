// The Vercel provider driven through the real @vercel/sandbox SDK against the loopback stand-in.
import { once } from 'node:events';
import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Sandbox } from '@vercel/sandbox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { VercelProvider } from '../../src/providers/vercel/vercel-provider.js';
import { standinProvider } from '../helpers/vercel-standin/standin-provider.js';
import { listTree } from '../helpers/vercel-standin/tree-listing.js';
import { VercelStandin } from '../helpers/vercel-standin/vercel-standin.js';
import { apiUrlFetch } from '../../src/providers/vercel/api-url-fetch.js';

let standin: VercelStandin;
let provider: VercelProvider;
let scratch: string;
const signal = () => AbortSignal.timeout(30_000);

beforeEach(async () => {
  standin = await VercelStandin.start();
  provider = standinProvider(standin);
  scratch = await mkdtemp(path.join(tmpdir(), 'vercel-provider-test-'));
});

afterEach(async () => {
  await standin.close();
  await rm(scratch, { recursive: true, force: true });
});

// Creates an empty incarnation and returns its handle.
async function createEmpty(workspaceId = 'ws1', generation = 1): Promise<string> {
  const { handle } = await provider.create({ workspaceId, generation, source: { type: 'empty' }, signal: signal() });
  return handle;
}

// Runs `sh -c script` in the tree and returns its stdout, failing the test on a non-zero exit.
async function sh(handle: string, script: string): Promise<string> {
  const result = await provider.exec(handle, { cmd: ['sh', '-c', script], timeoutMs: 20_000, signal: signal() });
  expect(result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
  return result.stdout;
}

describe('VercelProvider against the stand-in', () => {
  it('creates a named sandbox through POST /v3/sandboxes with the deterministic name and fleet tags', async () => {
    const { handle, hostId } = await provider.create({ workspaceId: 'ws-create', generation: 3, source: { type: 'empty' }, signal: signal() });
    expect(handle).toBe('vercel:fleet-ws-create:g3');
    expect(hostId).toBe('vercel');
    const created = standin.requests.filter((request) => request.route === 'createSandbox');
    expect(created.map((request) => request.path)).toEqual(['/v3/sandboxes']);
    expect(created[0]!.headers.authorization).toBe(`Bearer ${standin.credentials.token}`);
    expect(standin.sandbox(handle)?.tags).toEqual({ 'fleet-workspace': 'ws-create', 'fleet-generation': '3' });
    expect(await provider.get(handle, signal())).toEqual({ handle, workspaceId: 'ws-create', generation: 3, hostId: 'vercel', state: 'running', createdAt: standin.sandbox(handle)!.createdAt, sessionId: standin.sandbox(handle)!.session.id });
  });

  it('adopts its own sandbox when a create is repeated (name taken, HTTP 409) and clears its marker', async () => {
    const handle = await createEmpty('ws-twice', 1);
    await provider.markReady(handle, { generation: 1, source: 'empty', readyAt: 1 }, signal());
    const again = await provider.create({ workspaceId: 'ws-twice', generation: 1, source: { type: 'empty' }, signal: signal() });
    expect(again.handle).toBe(handle);
    expect(standin.state.sandboxes.size).toBe(1);
    expect(await provider.readReady(handle, signal())).toBeNull();
  });

  it('creates from a base snapshot: files come along, a baked-in ready marker does not', async () => {
    const base = await createEmpty('base', 1);
    await provider.writeFiles(base, [{ path: 'etc/app.conf', content: Buffer.from('port=1\n') }], signal());
    await provider.markReady(base, { generation: 1, source: 'empty', readyAt: 5 }, signal());
    const { snapshotId } = await provider.snapshot(base, { expirationMs: 0, signal: signal() });

    const { handle } = await provider.create({ workspaceId: 'ws-base', generation: 1, source: { type: 'base-snapshot', snapshotId }, signal: signal() });
    expect(standin.sandbox(handle)?.sourceSnapshotId).toBe(snapshotId);
    expect((await provider.readFile(handle, 'etc/app.conf', signal()))?.toString()).toBe('port=1\n');
    expect(await provider.readReady(handle, signal())).toBeNull();
  });

  it('exec streams stdout and stderr, honours cwd and env, and returns a non-zero exit as a result', async () => {
    const handle = await createEmpty();
    await sh(handle, 'mkdir -p sub/dir');
    const chunks: string[] = [];
    const errors: string[] = [];
    const result = await provider.exec(handle, {
      cmd: ['sh', '-c', 'printf here > marker.txt; echo "$GREETING"; echo oops >&2; exit 3'],
      cwd: 'sub/dir',
      env: { GREETING: 'hello there' },
      timeoutMs: 20_000,
      signal: signal(),
      onStdout: (chunk) => chunks.push(chunk.toString()),
      onStderr: (chunk) => errors.push(chunk.toString()),
    });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe('hello there\n');
    expect(await readFile(standin.sandboxDir(handle, '/vercel/sandbox/workspace/sub/dir/marker.txt'), 'utf8')).toBe('here');
    expect(result.stderr).toBe('oops\n');
    expect(chunks.join('')).toBe(result.stdout);
    expect(errors.join('')).toBe('oops\n');
    expect(result.timedOut).toBe(false);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('exec refuses a cwd outside the tree and an empty command as permanent', async () => {
    const handle = await createEmpty();
    await expect(provider.exec(handle, { cmd: ['true'], cwd: '../..', timeoutMs: 5_000, signal: signal() })).rejects.toMatchObject({ classification: 'permanent' });
    await expect(provider.exec(handle, { cmd: [], timeoutMs: 5_000, signal: signal() })).rejects.toMatchObject({ classification: 'permanent' });
  });

  it('writeFiles and readFile work on tree-relative paths; a missing file is null; escapes are refused', async () => {
    const handle = await createEmpty();
    await provider.writeFiles(
      handle,
      [
        { path: 'a/b/c.txt', content: Buffer.from('nested') },
        { path: 'run.sh', content: Buffer.from('#!/bin/sh\necho ran\n'), mode: 0o755 },
        { path: 'bin.dat', content: Buffer.from([0, 255, 1, 254]) },
      ],
      signal(),
    );
    expect((await provider.readFile(handle, 'a/b/c.txt', signal()))?.toString()).toBe('nested');
    expect(await provider.readFile(handle, 'bin.dat', signal())).toEqual(Buffer.from([0, 255, 1, 254]));
    expect(await sh(handle, './run.sh')).toBe('ran\n');
    expect((await lstat(standin.sandboxDir(handle, '/vercel/sandbox/workspace/a/b/c.txt'))).isFile()).toBe(true);
    expect(await provider.readFile(handle, 'nope.txt', signal())).toBeNull();
    await expect(provider.readFile(handle, '../.fleet/ready.json', signal())).rejects.toMatchObject({ classification: 'permanent' });
    await expect(provider.writeFiles(handle, [{ path: '/etc/passwd', content: Buffer.from('x') }], signal())).rejects.toMatchObject({ classification: 'permanent' });
  });

  it('openTree mirrors exactly the tree: nested dirs, empty dirs, a symlink, odd names, modes; not the marker', async () => {
    const handle = await createEmpty();
    const longName = 'l'.repeat(120);
    await sh(
      handle,
      [
        'mkdir -p "deep/er/est" "empty dir" "ünï cödé"',
        'printf nested > deep/er/est/file.txt',
        'printf spaced > "with space.txt"',
        'printf dash > ./-leading-dash',
        'printf quote > "it\'s \\"quoted\\""',
        `printf long > ${longName}`,
        'printf u > "ünï cödé/ß.txt"',
        'printf x > script.sh && chmod 755 script.sh',
        'ln -s deep/er/est/file.txt link-to-file',
        'ln -s /etc/passwd absolute-link',
        'ln -s ../../outside dangling-link',
        'printf h > hard1 && ln hard1 hard2',
      ].join(' && '),
    );
    await provider.markReady(handle, { generation: 1, source: 'empty', readyAt: 1 }, signal());
    const tree = await provider.openTree(handle, signal());
    try {
      const expected = await listTree(standin.sandboxDir(handle, '/vercel/sandbox/workspace'));
      const exported = await listTree(tree.path);
      expect(exported).toEqual(expected);
      expect(exported['link-to-file']).toBe('link -> deep/er/est/file.txt');
      expect(exported['absolute-link']).toBe('link -> /etc/passwd');
      expect(exported['dangling-link']).toBe('link -> ../../outside');
      expect(exported['empty dir']).toBe('dir');
      expect(exported['script.sh']).toMatch(/^file 755 /);
      expect(exported[longName]).toMatch(/^file /);
      expect(Object.keys(exported).some((name) => name.includes('ready'))).toBe(false);
    } finally {
      await tree.release();
    }
    // The tree is the host's mirror (0700, outside the sandbox): it stays for the next persist,
    // which, with nothing changed, moves only the listing.
    expect((await lstat(path.dirname(tree.path))).mode & 0o777).toBe(0o700);
    expect(tree.transfer).toMatchObject({ full: true, requestBytes: expect.any(Number) });
    const again = await provider.openTree(handle, signal());
    await again.release();
    expect(again.path).toBe(tree.path);
    expect(again.transfer).toMatchObject({ files: 0, archiveBytes: 0, requestBytes: 0, full: false });
    // No transfer file stays behind in the sandbox.
    expect(await sh(handle, 'ls -A ../.fleet')).toBe('ready.json\n');
  });

  it('importTree replaces the tree (symlinks, empty dirs, modes) and clears the ready marker first', async () => {
    const handle = await createEmpty();
    await sh(handle, 'mkdir -p old && printf stale > old/file && printf stale > .hidden');
    await provider.markReady(handle, { generation: 1, source: 'rev-0', readyAt: 1 }, signal());

    const from = path.join(scratch, 'restore');
    await mkdir(path.join(from, 'src/nested'), { recursive: true });
    await mkdir(path.join(from, 'empty'));
    await writeFile(path.join(from, 'src/nested/main.ts'), 'export {};\n');
    await writeFile(path.join(from, 'name with spaces & ünïcode.md'), 'odd\n');
    await writeFile(path.join(from, 'tool'), '#!/bin/sh\necho tool\n');
    await chmod(path.join(from, 'tool'), 0o755);
    await symlink('src/nested/main.ts', path.join(from, 'main-link'));

    await provider.importTree(handle, from, signal());
    expect(await provider.readReady(handle, signal())).toBeNull();
    expect(await listTree(standin.sandboxDir(handle, '/vercel/sandbox/workspace'))).toEqual(await listTree(from));
    expect(await sh(handle, './tool')).toBe('tool\n');

    // Round trip: export what was imported.
    const tree = await provider.openTree(handle, signal());
    try {
      expect(await listTree(tree.path)).toEqual(await listTree(from));
    } finally {
      await tree.release();
    }
  });

  it('keeps the ready marker outside the tree: mark, read, clear', async () => {
    const handle = await createEmpty();
    expect(await provider.readReady(handle, signal())).toBeNull();
    const marker = { generation: 7, source: 'rev-42', readyAt: 1_700_000_000_000 };
    await provider.markReady(handle, marker, signal());
    expect(await provider.readReady(handle, signal())).toEqual(marker);
    expect(JSON.parse(await readFile(standin.sandboxDir(handle, '/vercel/sandbox/.fleet/ready.json'), 'utf8'))).toEqual(marker);
    expect(await sh(handle, 'ls -A')).toBe('');
    await provider.clearReady(handle, signal());
    expect(await provider.readReady(handle, signal())).toBeNull();
    await provider.clearReady(handle, signal());
  });

  it('snapshots with expiration 0 (never expires), then creates a new generation from it', async () => {
    const handle = await createEmpty('ws-snap', 1);
    await sh(handle, 'mkdir -p kept && printf v1 > kept/file');
    const { snapshotId, expiresAt } = await provider.snapshot(handle, { expirationMs: 0, signal: signal() });
    expect(expiresAt).toBeNull();
    expect(await provider.snapshotStatus(snapshotId, signal())).toBe('usable');
    expect(standin.state.snapshots.get(snapshotId)).toMatchObject({ status: 'created', expiration: 0 });
    expect(standin.state.snapshots.get(snapshotId)?.expiresAt).toBeUndefined();
    // Taking a snapshot stops the session.
    expect((await provider.get(handle, signal()))?.state).toBe('stopped');

    const next = await provider.create({ workspaceId: 'ws-snap', generation: 2, source: { type: 'workspace-snapshot', snapshotId }, signal: signal() });
    expect(next.handle).toBe('vercel:fleet-ws-snap:g2');
    expect((await provider.readFile(next.handle, 'kept/file', signal()))?.toString()).toBe('v1');
  });

  it('passes a non-zero expiration through as the snapshot expiry', async () => {
    const handle = await createEmpty();
    const day = 86_400_000;
    const { snapshotId, expiresAt } = await provider.snapshot(handle, { expirationMs: day, signal: signal() });
    const stored = standin.state.snapshots.get(snapshotId)!;
    expect(stored.expiration).toBe(day);
    expect(stored.expiresAt! - stored.createdAt).toBe(day);
    // The provider's answer, read back through the SDK: what the bake checks.
    expect(expiresAt).toBe(stored.expiresAt);
  });

  it('waits while the sandbox is snapshotting and resolves once the snapshot is usable', async () => {
    const handle = await createEmpty();
    const release = standin.holdSnapshots();
    let settled = false;
    const snapshotting = provider.snapshot(handle, { expirationMs: 0, signal: signal() }).finally(() => (settled = true));
    await once(standin.events, 'snapshot');
    // At least one readiness poll sees the sandbox still snapshotting.
    await standin.nextRequest('getSandbox', () => standin.sandbox(handle)?.session.status === 'snapshotting');
    expect(settled).toBe(false);
    release();
    const { snapshotId } = await snapshotting;
    expect(standin.state.snapshots.get(snapshotId)?.status).toBe('created');
    expect(standin.sandbox(handle)?.session.status).toBe('stopped');
  });

  it('stop, then a session call auto-resumes through HTTP 410 and keeps the files (persistent)', async () => {
    const handle = await createEmpty();
    await sh(handle, 'printf kept > file');
    const firstSession = standin.sandbox(handle)!.session.id;
    await provider.stop(handle, signal());
    expect((await provider.get(handle, signal()))?.state).toBe('stopped');
    await provider.stop(handle, signal());

    const resumed = once(standin.events, 'resume');
    const before = standin.requests.length;
    expect(await sh(handle, 'cat file')).toBe('kept');
    await resumed;
    const routes = standin.requests.slice(before).map((request) => `${request.route}${request.query.get('resume') === 'true' ? '?resume' : ''}`);
    // A command runs detached: started, then its logs and its exit read (after the resume, on the new session).
    expect(routes).toEqual(['getSandbox', 'runCommand', 'getSandbox?resume', 'runCommand', 'commandLogs', 'getCommand']);
    expect(standin.sandbox(handle)!.session.id).not.toBe(firstSession);
    expect((await provider.get(handle, signal()))?.state).toBe('running');
  });

  it('resume() starts a new session of a sandbox whose session timed out', async () => {
    const handle = await createEmpty();
    standin.expireSession(handle);
    expect((await provider.get(handle, signal()))?.state).toBe('stopped');
    await provider.resume(handle, signal());
    expect((await provider.get(handle, signal()))?.state).toBe('running');
  });

  it('destroy deletes the sandbox and its host mirror (the stat cache, its log and line marker too); destroying again is fine; using it afterwards is gone', async () => {
    const handle = await createEmpty();
    const tree = await provider.openTree(handle, signal());
    await tree.release();
    for (const file of [tree.statCache!, `${tree.statCache}.log`, `${tree.statCache}.line`]) await writeFile(file, 'cache');
    await provider.destroy(handle, signal());
    await expect(lstat(path.dirname(tree.statCache!)), 'the mirror directory is gone').rejects.toMatchObject({ code: 'ENOENT' });
    expect(await provider.get(handle, signal())).toBeNull();
    expect((standin.sandbox(handle) !== undefined)).toBe(false);
    await provider.destroy(handle, signal());
    await expect(provider.exec(handle, { cmd: ['true'], timeoutMs: 5_000, signal: signal() })).rejects.toMatchObject({ classification: 'gone' });
  });

  it('deleteSnapshot deletes, and deleting an absent snapshot is not an error', async () => {
    const handle = await createEmpty();
    const { snapshotId } = await provider.snapshot(handle, { expirationMs: 0, signal: signal() });
    await provider.deleteSnapshot(snapshotId, signal());
    expect(standin.state.snapshots.get(snapshotId)?.status).toBe('deleted');
    await provider.deleteSnapshot(snapshotId, signal());
    await provider.deleteSnapshot('snap_does_not_exist', signal());
    await expect(provider.create({ workspaceId: 'ws', generation: 9, source: { type: 'workspace-snapshot', snapshotId }, signal: signal() })).rejects.toMatchObject({
      code: 'SnapshotUnavailable',
      classification: 'permanent',
    });
  });

  it('lists fleet sandboxes across pages, with ids from tags for hashed names, and skips foreign ones', async () => {
    await standin.close();
    standin = await VercelStandin.start({ pageSize: 2 });
    provider = standinProvider(standin);
    const longId = `w${'x'.repeat(100)}`;
    const handles = [await createEmpty('ws-a', 1), await createEmpty('ws-b', 4), await createEmpty(longId, 2)];
    await Sandbox.create({ ...standin.credentials, fetch: apiUrlFetch(standin.url), name: 'not-ours' });
    await provider.stop(handles[1]!, signal());

    const listed = await provider.list(signal());
    expect(listed.sort((a, b) => a.handle.localeCompare(b.handle))).toEqual(
      [
        { handle: handles[0], workspaceId: 'ws-a', generation: 1, hostId: 'vercel', state: 'running', createdAt: expect.any(Number), sessionId: standin.sandbox(handles[0]!)!.session.id },
        { handle: handles[1], workspaceId: 'ws-b', generation: 4, hostId: 'vercel', state: 'stopped', createdAt: expect.any(Number), sessionId: standin.sandbox(handles[1]!)!.session.id, snapshotId: expect.any(String) },
        { handle: handles[2], workspaceId: longId, generation: 2, hostId: 'vercel', state: 'running', createdAt: expect.any(Number), sessionId: standin.sandbox(handles[2]!)!.session.id },
      ].sort((a, b) => a.handle!.localeCompare(b.handle!)),
    );
    expect(handles[2]!.length).toBeLessThanOrEqual(128);
    expect(standin.requests.filter((request) => request.route === 'listSandboxes').length).toBeGreaterThan(1);
  });

  it('creates sandboxes with the configured session settings (persistent, timeout, env) on the image endpoint, never with a runtime', async () => {
    const configured = standinProvider(standin, { persistent: false, sandboxTimeoutMs: 120_000 });
    const { handle } = await configured.create({ workspaceId: 'ws-settings', generation: 2, source: { type: 'empty' }, env: { GREETING: 'hi' }, signal: signal() });
    const created = standin.requests.filter((request) => request.route === 'createSandbox');
    expect(created.map((request) => request.path)).toEqual(['/v3/sandboxes']);
    expect(standin.sandbox(handle)).toMatchObject({ persistent: false, timeout: 120_000, env: { GREETING: 'hi' }, image: 'vercel/sandbox/universal:latest' });
    expect(standin.sandbox(handle)?.runtime).toBeUndefined();
    const greeting = await configured.exec(handle, { cmd: ['sh', '-c', 'echo "$GREETING"'], timeoutMs: 10_000, signal: signal() });
    expect(greeting.stdout).toBe('hi\n');
  });

  it('reports a snapshot that expired or was deleted as unusable, and a create from it as a permanent SnapshotUnavailable', async () => {
    const handle = await createEmpty('ws-exp', 1);
    const { snapshotId } = await provider.snapshot(handle, { expirationMs: 86_400_000, signal: signal() });
    standin.state.snapshots.get(snapshotId)!.expiresAt = Date.now() - 1;
    expect(await provider.snapshotStatus(snapshotId, signal())).toBe('expired');
    expect(await provider.snapshotStatus('snap_never_existed', signal())).toBe('missing');
    await expect(provider.create({ workspaceId: 'ws-exp', generation: 2, source: { type: 'workspace-snapshot', snapshotId }, signal: signal() })).rejects.toMatchObject({
      code: 'SnapshotUnavailable',
      retryable: false,
      classification: 'permanent',
    });
  });
});

describe('one durable name per workspace, fenced by generation', () => {
  it('creates every generation under the same name; an old handle finds its incarnation gone and changes nothing', async () => {
    const g1 = await createEmpty('ws-durable', 1);
    expect(g1).toBe('vercel:fleet-ws-durable:g1');
    await provider.writeFiles(g1, [{ path: 'a.txt', content: Buffer.from('g1') }], signal());
    // The next generation takes the name over: the older incarnation (fenced by the bump) is deleted.
    const { handle: g2 } = await provider.create({ workspaceId: 'ws-durable', generation: 2, source: { type: 'empty' }, signal: signal() });
    expect(g2).toBe('vercel:fleet-ws-durable:g2');
    expect([...standin.state.sandboxes.keys()]).toEqual(['fleet-ws-durable']);
    expect(standin.state.sandboxes.get('fleet-ws-durable')?.tags).toEqual({ 'fleet-workspace': 'ws-durable', 'fleet-generation': '2' });

    // Every call of the old handle: gone, nothing written, nothing deleted.
    expect(await provider.get(g1, signal())).toBeNull();
    await expect(provider.writeFiles(g1, [{ path: 'stale.txt', content: Buffer.from('x') }], signal())).rejects.toMatchObject({ classification: 'gone' });
    await expect(provider.exec(g1, { cmd: ['sh', '-c', 'echo stale > stale.txt'], timeoutMs: 5_000, signal: signal() })).rejects.toMatchObject({ classification: 'gone' });
    await provider.destroy(g1, signal());
    expect(await provider.get(g2, signal())).toMatchObject({ handle: g2, generation: 2, state: 'running' });
    expect(await provider.readFile(g2, 'stale.txt', signal())).toBeNull();

    // A stale creator (generation 1 again) never takes the name back.
    await expect(provider.create({ workspaceId: 'ws-durable', generation: 1, source: { type: 'empty' }, signal: signal() })).rejects.toMatchObject({ classification: 'busy', context: expect.objectContaining({ held: 2 }) });
    expect(standin.state.sandboxes.get('fleet-ws-durable')?.tags?.['fleet-generation']).toBe('2');
    // The listing names the live incarnation, with its session.
    expect(await provider.list(signal())).toEqual([expect.objectContaining({ handle: g2, workspaceId: 'ws-durable', generation: 2, sessionId: expect.any(String) })]);
  });

  it("the SDK's auto-resume cannot carry a stale call into the next generation (and without the fence it would)", async () => {
    const g1 = await createEmpty('ws-resume', 1);
    const connection = { ...standin.credentials, fetch: apiUrlFetch(standin.url) };
    // Held across the replacement, as a long persist or exec of generation 1 holds its SDK object.
    const { fencedFetch } = await import('../../src/providers/vercel/generation-fence.js');
    const fenced = await Sandbox.get({ ...connection, fetch: fencedFetch(connection.fetch, 'fleet-ws-resume', 1), name: 'fleet-ws-resume' });
    const unfenced = await Sandbox.get({ ...connection, name: 'fleet-ws-resume' });
    expect(g1).toBe('vercel:fleet-ws-resume:g1');
    const { handle: g2 } = await provider.create({ workspaceId: 'ws-resume', generation: 2, source: { type: 'empty' }, signal: signal() });

    // The old session answers 410; the SDK fetches the sandbox by name again and would retry there.
    await expect(fenced.writeFiles([{ path: '/vercel/sandbox/workspace/stale.txt', content: Buffer.from('stale') }])).rejects.toMatchObject({ response: { status: 404 } });
    expect(await provider.readFile(g2, 'stale.txt', signal())).toBeNull();
    // The control: the same call through an unfenced SDK object lands in generation 2.
    await unfenced.writeFiles([{ path: '/vercel/sandbox/workspace/unfenced.txt', content: Buffer.from('landed') }]);
    expect((await provider.readFile(g2, 'unfenced.txt', signal()))?.toString()).toBe('landed');
  });

  it('keeps serving a legacy per-generation sandbox under its own name until it is replaced', async () => {
    await Sandbox.create({ ...standin.credentials, fetch: apiUrlFetch(standin.url), name: 'fleet-ws-old-g4', tags: { 'fleet-workspace': 'ws-old', 'fleet-generation': '4' } });
    const legacy = 'fleet-ws-old-g4';
    await provider.writeFiles(legacy, [{ path: 'kept.txt', content: Buffer.from('legacy') }], signal());
    expect(await provider.get(legacy, signal())).toMatchObject({ handle: legacy, workspaceId: 'ws-old', generation: 4 });
    expect((await provider.list(signal())).map((s) => s.handle)).toEqual([legacy]);
    // The next generation gets the durable name beside it; the legacy one goes when it is retired.
    const { handle } = await provider.create({ workspaceId: 'ws-old', generation: 5, source: { type: 'empty' }, signal: signal() });
    expect(handle).toBe('vercel:fleet-ws-old:g5');
    await provider.destroy(legacy, signal());
    expect([...standin.state.sandboxes.keys()]).toEqual(['fleet-ws-old']);
  });
});
