// Every file route (history and restore too) against hostile paths and trees: traversal, absolute paths, NUL, a symlink
// planted in the live tree pointing at a host directory, oversize bodies. Each is refused or acts
// inside the tree only, and nothing outside the tree is read, written or removed; both with
// namespaced sandboxes (the default here) and without isolation (FLEET_LOCAL_ISOLATION=none).
import { mkdir, mkdtemp, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addCleanup } from '../helpers/cleanup.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { answer, createWebHarness } from '../helpers/web-harness.js';
import { removeTree } from '../../src/tree/remove-tree.js';

const SECRET = 'host secret';

async function hostDir() {
  const dir = await mkdtemp(path.join(tmpdir(), 'fleet-host-'));
  addCleanup(() => removeTree(dir));
  await writeFile(path.join(dir, 'secret.txt'), SECRET);
  return dir;
}

for (const isolation of ['default', 'none'] as const) {
  describe(`file routes against a hostile tree (isolation ${isolation})`, () => {
    it('traversal, absolute and NUL paths are 400 on every file route; nothing is written', async () => {
      const h = await createWebHarness({ FLEET_FILE_MAX_BYTES: '1024', ...(isolation === 'none' ? { FLEET_LOCAL_ISOLATION: 'none' } : {}) });
      await testWorkers(h.config, ['provision', 'persist']);
      expect((await answer(h.request('/v1/workspaces/ws-h/provision?wait=true', { json: {} }))).status).toBe(200);
      // A kept revision holding the names a hostile path could be cut down to, gone from the live
      // tree since: a restore that resolved one of them would write it back.
      await h.write('ws-h', { 'escape.txt': 'e', 'b': 'b', 'a': 'a', 'etc/passwd': 'p' });
      const kept = await answer(h.request('/v1/workspaces/ws-h/persist?wait=true', { json: { generation: 1, delete: true, reason: 'turn-end' } }));
      for (const name of ['escape.txt', 'b', 'a', 'etc']) await removeTree(path.join(h.live('ws-h'), name));
      const revision = kept.body.result.revision as string;
      const before = await readdir(path.dirname(h.live('ws-h')));
      for (const bad of ['..%2Fescape.txt', '%2E%2E%2F%2E%2E%2Fetc%2Fpasswd', '%2Fetc%2Fpasswd', 'a%00b', 'a%2F%2Fb', '.%2Fa', 'a%2F..%2F..%2Fb']) {
        for (const method of ['GET', 'PUT', 'DELETE']) {
          const r = await answer(h.request(`/v1/workspaces/ws-h/files/${bad}`, { method, ...(method === 'PUT' ? { body: 'x', headers: { 'content-type': 'application/octet-stream' } } : {}) }));
          expect(r, `${method} ${bad}`).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid', field: 'path' } } });
        }
        expect(await answer(h.request(`/v1/workspaces/ws-h/files/${bad}/history`)), `history ${bad}`).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid', field: 'path' } } });
        expect(await answer(h.request(`/v1/workspaces/ws-h/files/${bad}/restore`, { json: { revision } })), `restore ${bad}`).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid', field: 'path' } } });
      }
      // An empty last segment before the suffix (`a/` + `/history`) is refused the same way.
      expect(await answer(h.request('/v1/workspaces/ws-h/files/a//history'))).toMatchObject({ status: 400, body: { error: { field: 'path' } } });
      expect(await answer(h.request('/v1/workspaces/ws-h/files/a//restore', { json: { revision } }))).toMatchObject({ status: 400, body: { error: { field: 'path' } } });
      expect(await answer(h.request('/v1/workspaces/ws-h/tree?path=..%2F..'))).toMatchObject({ status: 400, body: { error: { field: 'path' } } });
      expect(await answer(h.request('/v1/workspaces/ws-h/tree?colour=red'))).toMatchObject({ status: 400, body: { error: { field: 'colour' } } });
      const big = await answer(h.request('/v1/workspaces/ws-h/files/big.bin', { method: 'PUT', body: Buffer.alloc(2048, 1), headers: { 'content-type': 'application/octet-stream' } }));
      expect(big).toMatchObject({ status: 413, body: { error: { code: 'PayloadTooLarge' } } });
      expect(await answer(h.request('/v1/workspaces/ws-h/files/a.txt?mode=4755', { method: 'PUT', body: 'x' }))).toMatchObject({ status: 200 });
      expect(await answer(h.request('/v1/workspaces/ws-h/files/b.txt?mode=rwx', { method: 'PUT', body: 'x' }))).toMatchObject({ status: 400, body: { error: { field: 'mode' } } });
      // Only the one legal write landed, without its setuid bit; the fleet's directory of live trees is unchanged.
      expect(await readdir(h.live('ws-h'))).toEqual(['a.txt']);
      expect(await readdir(path.dirname(h.live('ws-h')))).toEqual(before);
    });

    it('a symlink planted in the live tree never leads a read, write or delete onto the host', async () => {
      const h = await createWebHarness(isolation === 'none' ? { FLEET_LOCAL_ISOLATION: 'none' } : {});
      await testWorkers(h.config, ['provision', 'persist']);
      expect((await answer(h.request('/v1/workspaces/ws-s/provision?wait=true', { json: {} }))).status).toBe(200);
      const host = await hostDir();
      const root = h.live('ws-s');
      // A kept revision where esc/ was a real directory holding secret.txt and link.txt was a file.
      await h.write('ws-s', { 'esc/secret.txt': 'overwritten', 'link.txt': 'overwritten' });
      const kept = await answer(h.request('/v1/workspaces/ws-s/persist?wait=true', { json: { generation: 1, delete: true, reason: 'turn-end' } }));
      await removeTree(path.join(root, 'esc'));
      await removeTree(path.join(root, 'link.txt'));
      await symlink(host, path.join(root, 'esc'));
      await symlink(path.join(host, 'secret.txt'), path.join(root, 'link.txt'));
      await mkdir(path.join(root, 'real'));

      for (const file of ['esc%2Fsecret.txt', 'link.txt']) {
        const read = await h.request(`/v1/workspaces/ws-s/files/${file}`);
        expect(read.status, file).not.toBe(200);
        expect(await read.text(), file).not.toContain(SECRET);
      }
      const through = await answer(h.request('/v1/workspaces/ws-s/files/esc%2Fplanted.txt', { method: 'PUT', body: 'pwned' }));
      expect(through.status).toBe(400);
      // A write naming the symlink itself is refused too (never followed, never silently replaced); its target is untouched.
      expect(await answer(h.request('/v1/workspaces/ws-s/files/link.txt', { method: 'PUT', body: 'mine' }))).toMatchObject({ status: 400, body: { error: { field: 'path' } } });
      // Restoring those files from the kept revision writes through no symlink either.
      for (const file of ['esc%2Fsecret.txt', 'link.txt']) {
        expect(await answer(h.request(`/v1/workspaces/ws-s/files/${file}/restore`, { json: { revision: kept.body.result.revision } })), `restore ${file}`).toMatchObject({ status: 400, body: { error: { field: 'path' } } });
      }
      expect(await readFile(path.join(host, 'secret.txt'), 'utf8')).toBe(SECRET);

      // Deleting through the symlink removes nothing on the host; deleting the symlink removes the link only.
      const del = await answer(h.request('/v1/workspaces/ws-s/files/esc%2Fsecret.txt', { method: 'DELETE' }));
      expect(del.body?.removed ?? false).toBe(false);
      expect(await answer(h.request('/v1/workspaces/ws-s/files/esc', { method: 'DELETE' }))).toMatchObject({ status: 200, body: { removed: true } });
      expect(await readdir(host)).toEqual(['secret.txt']);
      expect(await readFile(path.join(host, 'secret.txt'), 'utf8')).toBe(SECRET);

      // A listing through the symlink shows nothing of the host; the listing of the tree shows the link as a link.
      await symlink(host, path.join(root, 'esc2'));
      const listed = await answer(h.request('/v1/workspaces/ws-s/tree?path=esc2'));
      expect(listed.status).not.toBe(200);
      expect(JSON.stringify(listed.body)).not.toContain('secret.txt');
      const top = await answer(h.request('/v1/workspaces/ws-s/tree'));
      expect(top.body.entries.find((e: { path: string }) => e.path === 'esc2')).toMatchObject({ type: 'symlink' });
    });
  });
}
