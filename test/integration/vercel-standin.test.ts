// The stand-in's endpoints the provider does not use, checked with the real SDK so the stand-in
// stays faithful to the reference: detached commands with NDJSON logs, wait=true, kill, mkdir,
// extend-timeout, snapshot listing, non-persistent resume, and the 422 sandbox_snapshotting resume.
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { Sandbox, Snapshot } from '@vercel/sandbox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiUrlFetch } from '../../src/providers/vercel/api-url-fetch.js';
import { VercelStandin } from '../helpers/vercel-standin/vercel-standin.js';

let standin: VercelStandin;
let connection: { token: string; teamId: string; projectId: string; fetch: typeof fetch };

beforeEach(async () => {
  standin = await VercelStandin.start();
  connection = { ...standin.credentials, fetch: apiUrlFetch(standin.url) };
});

afterEach(async () => {
  await standin.close();
});

describe('Vercel stand-in driven by the real SDK', () => {
  it('runs detached commands: logs stream as NDJSON, wait returns the exit code', async () => {
    const sandbox = await Sandbox.create({ ...connection, name: 'detached' });
    const command = await sandbox.runCommand({ cmd: 'sh', args: ['-c', 'echo one; echo two >&2; exit 4'], detached: true });
    expect(command.exitCode).toBeNull();
    const lines: string[] = [];
    for await (const line of command.logs()) lines.push(`${line.stream}:${line.data}`);
    expect(lines.sort()).toEqual(['stderr:two\n', 'stdout:one\n']);
    const finished = await command.wait();
    expect(finished.exitCode).toBe(4);
    expect(await finished.stdout()).toBe('one\n');
  });

  it('kills a detached command', async () => {
    const sandbox = await Sandbox.create({ ...connection, name: 'killer' });
    const command = await sandbox.runCommand({ cmd: 'sleep', args: ['30'], detached: true });
    await command.kill('SIGTERM');
    expect((await command.wait()).exitCode).toBe(128 + 15);
  });

  it('makes directories, extends the timeout and reads files relative to the cwd', async () => {
    const sandbox = await Sandbox.create({ ...connection, name: 'files', timeout: 60_000 });
    await sandbox.mkDir('/vercel/sandbox/made');
    await sandbox.writeFiles([{ path: 'made/rel.txt', content: 'relative' }]);
    expect(await readFile(standin.sandboxDir('files', '/vercel/sandbox/made/rel.txt'), 'utf8')).toBe('relative');
    expect((await sandbox.readFileToBuffer({ path: 'rel.txt', cwd: '/vercel/sandbox/made' }))?.toString()).toBe('relative');
    expect(await sandbox.readFileToBuffer({ path: 'absent.txt' })).toBeNull();
    await sandbox.extendTimeout(30_000);
    expect(sandbox.currentSession().timeout).toBe(90_000);
  });

  it('restarts a non-persistent sandbox from scratch on resume', async () => {
    const sandbox = await Sandbox.create({ ...connection, name: 'ephemeral', persistent: false });
    await sandbox.writeFiles([{ path: 'note.txt', content: 'gone after stop' }]);
    await sandbox.stop();
    const again = await Sandbox.get({ ...connection, name: 'ephemeral', resume: true });
    expect(again.status).toBe('running');
    expect(await again.readFileToBuffer({ path: 'note.txt' })).toBeNull();
  });

  it('answers 422 sandbox_snapshotting while a snapshot is copied; the SDK resumes after it', async () => {
    const sandbox = await Sandbox.create({ ...connection, name: 'busy-snap' });
    const release = standin.holdSnapshots();
    const snapshot = await sandbox.snapshot({ expiration: 0 });
    expect(snapshot.expiresAt).toBeUndefined();
    expect(sandbox.status).toBe('snapshotting');
    const stale = await Sandbox.get({ ...connection, name: 'busy-snap' });
    const resumed = once(standin.events, 'resume');
    // The stale session answers 422 sandbox_snapshotting; the SDK then asks to resume, which waits for the copy.
    const resumeAsked = standin.nextRequest('getSandbox', (request) => request.query.get('resume') === 'true');
    const result = stale.runCommand('echo', ['after']);
    await resumeAsked;
    expect(stale.status).toBe('snapshotting');
    release();
    expect(await (await result).stdout()).toBe('after\n');
    await resumed;
    const answered = standin.requests.filter((request) => request.route === 'runCommand').length;
    expect(answered).toBe(2);
    const listed = await Snapshot.list({ ...connection, name: 'busy-snap' });
    expect(listed.snapshots.map((item) => item.id)).toContain(snapshot.snapshotId);
  });

  it('refuses a wrong team with the API error body', async () => {
    const error = await Sandbox.get({ ...connection, teamId: 'team_nope', name: 'x' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ json: { error: { code: 'forbidden' } }, response: { status: 403 } });
  });
});
