// The routes over kept revisions, through the web harness against real workers, the real local
// provider and a real format 2 archive: diff (added, changed, deleted, a type change, a mode-only
// change, an unchanged subtree never read), the history of a path added, changed, deleted and
// added again, and a file restored warm (into the live sandbox) and cold (a new revision that
// the next provision restores). Format 1 revisions answer 501.
import { chmod, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testWorkers } from '../helpers/fleet-harness.js';
import { answer, createWebHarness, type WebHarness } from '../helpers/web-harness.js';

const FORMAT_2 = { FLEET_ARCHIVE_FORMAT: '2' };
const UNKNOWN_REVISION = 'r20200101T000000000Z-g1-zzzzzz';

async function provisioned(h: WebHarness, ws: string): Promise<{ handle: string; generation: number }> {
  const done = await answer(h.request(`/v1/workspaces/${ws}/provision?wait=true`, { json: {} }));
  expect(done.status).toBe(200);
  return done.body.result;
}

// Persists the live tree (deletions included) and returns the new revision.
async function persisted(h: WebHarness, ws: string): Promise<string> {
  const generation = (await h.services.addresses.get(ws))!.generation;
  const done = await answer(h.request(`/v1/workspaces/${ws}/persist?wait=true`, { json: { generation, delete: true, reason: 'turn-end' } }));
  expect(done.status).toBe(200);
  expect(done.body.result.unchanged).toBe(false);
  return done.body.result.revision as string;
}

// The state a reaped workspace is in: its revisions archived, no live incarnation (cold).
async function reap(h: WebHarness, ws: string): Promise<void> {
  const address = (await h.services.addresses.get(ws))!;
  expect(await h.services.addresses.unpublish(ws, address.generation)).toBe(true);
  await h.services.providerFor(address).destroy(address.handle, AbortSignal.timeout(30_000));
}

const paths = (entries: { path: string }[]) => entries.map((e) => e.path);

describe('GET /v1/workspaces/{id}/diff', () => {
  it('lists added, changed (mode-only too) and deleted entries, a type change as deleted + added; an unchanged subtree is never read', async () => {
    const h = await createWebHarness(FORMAT_2);
    await testWorkers(h.config, ['provision', 'persist']);
    await provisioned(h, 'ws-diff');
    const untouched = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`vendor/lib/m${i}.js`, `module ${i}`]));
    await h.write('ws-diff', { ...untouched, 'a.txt': 'one', 'run.sh': 'echo hi', 'src/gone.txt': 'bye', 'src/keep.txt': 'keep', 'was-file': 'a file' });
    const r1 = await persisted(h, 'ws-diff');

    const live = h.live('ws-diff');
    await writeFile(path.join(live, 'a.txt'), 'three');
    await chmod(path.join(live, 'run.sh'), 0o755);
    await rm(path.join(live, 'src/gone.txt'));
    await rm(path.join(live, 'was-file'));
    await h.write('ws-diff', { 'was-file/inside.txt': 'now a directory', 'docs/new/readme.md': '# new' });
    const r2 = await persisted(h, 'ws-diff');

    const diff = await answer(h.request(`/v1/workspaces/ws-diff/diff?from=${r1}`));
    expect(diff.status).toBe(200);
    expect(diff.body).toMatchObject({ workspaceId: 'ws-diff', from: r1, to: r2, truncated: false, counts: { added: 5, changed: 2, deleted: 2 } });
    expect(paths(diff.body.added)).toEqual(['docs', 'was-file', 'docs/new', 'docs/new/readme.md', 'was-file/inside.txt']);
    expect(diff.body.changed).toEqual([
      { path: 'a.txt', type: 'file', size: 5, mode: 0o644, hash: expect.stringMatching(/^[0-9a-f]{64}$/), previousSize: 3, previousMode: 0o644, previousHash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      { path: 'run.sh', type: 'file', size: 7, mode: 0o755, hash: expect.any(String), previousSize: 7, previousMode: 0o644, previousHash: expect.any(String) },
    ]);
    expect(diff.body.changed[1].hash).toBe(diff.body.changed[1].previousHash);
    expect(diff.body.deleted).toEqual([
      { path: 'was-file', type: 'file', size: 6, mode: 0o644, hash: expect.any(String) },
      { path: 'src/gone.txt', type: 'file', size: 3, mode: 0o644, hash: expect.any(String) },
    ]);
    // The roots, src/ on both sides, docs/ and docs/new/ (added whole), was-file/ (added): never vendor/.
    expect(diff.body.treesRead).toBe(7);
    expect(JSON.stringify(diff.body)).not.toContain('vendor');

    // Both ends named, the other way round; the same revision is empty and reads nothing.
    const back = await answer(h.request(`/v1/workspaces/ws-diff/diff?from=${r2}&to=${r1}`));
    expect(back.body.counts).toEqual({ added: 2, changed: 2, deleted: 5 });
    expect(await answer(h.request(`/v1/workspaces/ws-diff/diff?from=${r2}&to=${r2}`))).toMatchObject({ status: 200, body: { added: [], changed: [], deleted: [], truncated: false, treesRead: 0 } });

    // Bounded: past the limit the answer is cut and says so.
    const cut = await answer(h.request(`/v1/workspaces/ws-diff/diff?from=${r1}&limit=3`));
    expect(cut.body).toMatchObject({ truncated: true, counts: { added: 1, changed: 2, deleted: 0 } });

    expect(await answer(h.request(`/v1/workspaces/ws-diff/diff?from=${UNKNOWN_REVISION}`))).toMatchObject({ status: 404, body: { error: { code: 'RevisionNotFound' } } });
    expect(await answer(h.request(`/v1/workspaces/ws-diff/diff?from=${r1}&to=${UNKNOWN_REVISION}`))).toMatchObject({ status: 404, body: { error: { code: 'RevisionNotFound' } } });
    expect(await answer(h.request('/v1/workspaces/ws-diff/diff'))).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid', field: 'from' } } });
    expect(await answer(h.request(`/v1/workspaces/ws-diff/diff?from=${r1}&colour=red`))).toMatchObject({ status: 400, body: { error: { field: 'colour' } } });
    expect(await answer(h.request(`/v1/workspaces/ws-diff/diff?from=${r1}&limit=0`))).toMatchObject({ status: 400, body: { error: { field: 'limit' } } });
    expect(await answer(h.request(`/v1/workspaces/ws-diff/diff?from=${r1}&limit=100001`))).toMatchObject({ status: 400, body: { error: { field: 'limit' } } });
    expect(await answer(h.request('/v1/workspaces/ws-diff/diff?from=not-a-revision'))).toMatchObject({ status: 400, body: { error: { field: 'from' } } });
  });
});

describe('GET /v1/workspaces/{id}/files/{path}/history', () => {
  it('lists the revisions that added, changed, deleted and re-added a path, newest first; unrelated revisions are skipped', async () => {
    const h = await createWebHarness(FORMAT_2);
    await testWorkers(h.config, ['provision', 'persist']);
    await provisioned(h, 'ws-hist');
    const live = h.live('ws-hist');
    await h.write('ws-hist', { 'other.txt': '0' });
    const r0 = await persisted(h, 'ws-hist');
    await h.write('ws-hist', { 'notes/plan.md': 'v1' });
    const r1 = await persisted(h, 'ws-hist');
    await h.write('ws-hist', { 'notes/plan.md': 'v2!' });
    const r2 = await persisted(h, 'ws-hist');
    await h.write('ws-hist', { 'other.txt': '1' });
    const r3 = await persisted(h, 'ws-hist');
    await rm(path.join(live, 'notes/plan.md'));
    const r4 = await persisted(h, 'ws-hist');
    await h.write('ws-hist', { 'notes/plan.md': 'v3 again' });
    const r5 = await persisted(h, 'ws-hist');

    const history = await answer(h.request('/v1/workspaces/ws-hist/files/notes/plan.md/history'));
    expect(history.status).toBe(200);
    expect(history.body).toMatchObject({ workspaceId: 'ws-hist', path: 'notes/plan.md', truncated: false });
    expect(history.body.revisions.map((r: { revision: string; change: string }) => [r.revision, r.change])).toEqual([
      [r5, 'added'],
      [r4, 'deleted'],
      [r2, 'changed'],
      [r1, 'added'],
    ]);
    expect(history.body.revisions[0]).toMatchObject({ type: 'file', size: 8, mode: 0o644, hash: expect.stringMatching(/^[0-9a-f]{64}$/), reason: 'turn-end', generation: 1, createdAt: expect.any(String) });
    expect(history.body.revisions[1]).not.toHaveProperty('type');
    expect(history.body.revisions[2]).toMatchObject({ size: 3 });
    expect([r0, r3].some((r) => JSON.stringify(history.body).includes(r))).toBe(false);

    // Percent-encoded slashes work the same; the directory has its own history (its tree changed with its entries; emptied, it stayed).
    expect((await answer(h.request('/v1/workspaces/ws-hist/files/notes%2Fplan.md/history'))).body.revisions).toHaveLength(4);
    const dir = await answer(h.request('/v1/workspaces/ws-hist/files/notes/history'));
    expect(dir.body.revisions.map((r: { change: string; type?: string }) => `${r.change}:${r.type ?? '-'}`)).toEqual(['changed:dir', 'changed:dir', 'changed:dir', 'added:dir']);

    const cut = await answer(h.request('/v1/workspaces/ws-hist/files/notes/plan.md/history?limit=2'));
    expect(cut.body).toMatchObject({ truncated: true });
    expect(cut.body.revisions.map((r: { revision: string }) => r.revision)).toEqual([r5, r4]);
    // Exactly as many as there are is not truncated.
    expect((await answer(h.request('/v1/workspaces/ws-hist/files/notes/plan.md/history?limit=4'))).body.truncated).toBe(false);
    expect(await answer(h.request('/v1/workspaces/ws-hist/files/never.txt/history'))).toMatchObject({ status: 200, body: { revisions: [], truncated: false } });
    expect(await answer(h.request('/v1/workspaces/ws-hist/files/notes/plan.md/history?limit=abc'))).toMatchObject({ status: 400, body: { error: { field: 'limit' } } });
    expect(await answer(h.request('/v1/workspaces/ws-hist/files/notes/plan.md/history?revision=x'))).toMatchObject({ status: 400, body: { error: { field: 'revision' } } });
  });

  it('a file whose path ends in /history is read with its slashes percent-encoded; the unencoded URL is the history of its directory', async () => {
    const h = await createWebHarness(FORMAT_2);
    await testWorkers(h.config, ['provision', 'persist']);
    await provisioned(h, 'ws-name');
    await h.write('ws-name', { 'docs/history': 'a file named history', 'docs/restore': 'and one named restore' });
    await persisted(h, 'ws-name');
    const read = await h.request('/v1/workspaces/ws-name/files/docs%2Fhistory');
    expect(read.status).toBe(200);
    expect(await read.text()).toBe('a file named history');
    expect(await (await h.request('/v1/workspaces/ws-name/files/docs/restore')).text()).toBe('and one named restore');
    const history = await answer(h.request('/v1/workspaces/ws-name/files/docs/history'));
    expect(history.body).toMatchObject({ path: 'docs', revisions: [{ change: 'added', type: 'dir' }] });
    // Encoding a letter is not enough: the router decodes it before matching.
    expect((await answer(h.request('/v1/workspaces/ws-name/files/docs/%68istory'))).body).toMatchObject({ path: 'docs' });
    expect((await answer(h.request('/v1/workspaces/ws-name/files/docs%2Fhistory/history'))).body).toMatchObject({ path: 'docs/history', revisions: [{ change: 'added', type: 'file' }] });
  });
});

describe('POST /v1/workspaces/{id}/files/{path}/restore', () => {
  it('warm: puts the file back into the live sandbox as the revision holds it (content and mode); refuses what is not a regular file', async () => {
    const h = await createWebHarness(FORMAT_2);
    await testWorkers(h.config, ['provision', 'persist']);
    const { generation } = await provisioned(h, 'ws-rw');
    const live = h.live('ws-rw');
    await h.write('ws-rw', { 'bin/tool.sh': '#!/bin/sh\necho v1\n', 'dir/x.txt': 'x' });
    await chmod(path.join(live, 'bin/tool.sh'), 0o750);
    await symlink('dir/x.txt', path.join(live, 'link'));
    const r1 = await persisted(h, 'ws-rw');
    await writeFile(path.join(live, 'bin/tool.sh'), 'broken');
    await chmod(path.join(live, 'bin/tool.sh'), 0o600);

    const restored = await answer(h.request('/v1/workspaces/ws-rw/files/bin/tool.sh/restore', { json: { revision: r1 } }));
    expect(restored).toMatchObject({ status: 200, body: { workspaceId: 'ws-rw', path: 'bin/tool.sh', revision: r1, bytes: 18, source: { kind: 'live', generation } } });
    expect(await readFile(path.join(live, 'bin/tool.sh'), 'utf8')).toBe('#!/bin/sh\necho v1\n');
    expect((await stat(path.join(live, 'bin/tool.sh'))).mode & 0o7777).toBe(0o750);

    // A file deleted since comes back too.
    await rm(path.join(live, 'dir/x.txt'));
    expect((await answer(h.request('/v1/workspaces/ws-rw/files/dir%2Fx.txt/restore', { json: { revision: r1 } }))).status).toBe(200);
    expect(await readFile(path.join(live, 'dir/x.txt'), 'utf8')).toBe('x');

    const restore = (file: string, body: unknown) => answer(h.request(`/v1/workspaces/ws-rw/files/${file}/restore`, { json: body }));
    expect(await restore('dir', { revision: r1 })).toMatchObject({ status: 409, body: { error: { code: 'NotAFile' } } });
    expect(await restore('link', { revision: r1 })).toMatchObject({ status: 409, body: { error: { code: 'NotAFile' } } });
    expect(await restore('nope.txt', { revision: r1 })).toMatchObject({ status: 404, body: { error: { code: 'FileNotFound' } } });
    expect(await restore('bin/tool.sh', { revision: UNKNOWN_REVISION })).toMatchObject({ status: 404, body: { error: { code: 'RevisionNotFound' } } });
    expect(await restore('bin/tool.sh', { revision: 'yesterday' })).toMatchObject({ status: 400, body: { error: { field: 'revision' } } });
    expect(await restore('bin/tool.sh', {})).toMatchObject({ status: 400, body: { error: { field: 'revision' } } });
    expect(await restore('bin/tool.sh', { revision: r1, force: true })).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid' } } });
    expect(await restore('bin/tool.sh', { revision: r1, workspaceId: 'ws-other' })).toMatchObject({ status: 400, body: { error: { field: 'workspaceId' } } });
  });

  it('cold: with no sandbox live the restore commits a new revision, and the next provision restores the file', async () => {
    const h = await createWebHarness(FORMAT_2);
    await testWorkers(h.config, ['provision', 'persist']);
    await provisioned(h, 'ws-rc');
    const live = h.live('ws-rc');
    await h.write('ws-rc', { 'config.json': '{"v":1}', 'keep.txt': 'keep' });
    await chmod(path.join(live, 'config.json'), 0o640);
    const r1 = await persisted(h, 'ws-rc');
    await writeFile(path.join(live, 'config.json'), '{"v":2,"broken":true}');
    const r2 = await persisted(h, 'ws-rc');
    await reap(h, 'ws-rc');

    const restored = await answer(h.request('/v1/workspaces/ws-rc/files/config.json/restore', { json: { revision: r1 } }));
    expect(restored).toMatchObject({ status: 200, body: { revision: r1, bytes: 7, source: { kind: 'archive', revision: expect.any(String) } } });
    const written = restored.body.source.revision as string;
    expect([r1, r2]).not.toContain(written);
    // The new revision changed exactly that file back, and is the current one.
    const diff = await answer(h.request(`/v1/workspaces/ws-rc/diff?from=${r2}`));
    expect(diff.body).toMatchObject({ to: written, counts: { added: 0, changed: 1, deleted: 0 }, changed: [{ path: 'config.json', size: 7, mode: 0o640, previousSize: 21 }] });
    expect((await answer(h.request(`/v1/workspaces/ws-rc/diff?from=${r1}`))).body.counts).toEqual({ added: 0, changed: 0, deleted: 0 });
    const history = await answer(h.request('/v1/workspaces/ws-rc/files/config.json/history'));
    expect(history.body.revisions.map((r: { revision: string; reason: string }) => [r.revision, r.reason])).toEqual([
      [written, 'file-write'],
      [r2, 'turn-end'],
      [r1, 'turn-end'],
    ]);
    expect(await h.services.addresses.get('ws-rc')).toBeNull();

    await provisioned(h, 'ws-rc');
    expect(await readFile(path.join(live, 'config.json'), 'utf8')).toBe('{"v":1}');
    expect((await stat(path.join(live, 'config.json'))).mode & 0o7777).toBe(0o640);
    expect(await readFile(path.join(live, 'keep.txt'), 'utf8')).toBe('keep');
  });
});

describe('format 1 revisions', () => {
  it('diff, history and restore answer 501 naming fleet archive migrate', async () => {
    const h = await createWebHarness({ FLEET_ARCHIVE_FORMAT: '1' });
    await testWorkers(h.config, ['provision', 'persist']);
    await provisioned(h, 'ws-f1');
    await h.write('ws-f1', { 'a.txt': 'one' });
    const r1 = await persisted(h, 'ws-f1');
    for (const request of [
      h.request(`/v1/workspaces/ws-f1/diff?from=${r1}`),
      h.request('/v1/workspaces/ws-f1/files/a.txt/history'),
      h.request('/v1/workspaces/ws-f1/files/a.txt/restore', { json: { revision: r1 } }),
    ]) {
      const refused = await answer(request);
      expect(refused).toMatchObject({ status: 501, body: { error: { code: 'NotImplemented', message: expect.stringContaining('fleet archive migrate') } } });
    }
  });
});
